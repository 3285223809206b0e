import { RateLimitedError } from './errors.ts';

/** What tells the admission a request is over: its answer sent, or its client gone (a reply's raw response). */
export type Closing = { once(event: 'close', listener: () => void): unknown };

type Tenant = { running: number; waiting: (() => void)[]; idle?: NodeJS.Timeout };

/**
 * Each tenant's requests in progress, as a share of the budget `inFlight` split among the busy tenants: a tenant is
 * busy while it has a request in progress or waiting, and for `busyMs` after its last answer. Alone, a tenant may
 * have `inFlight` in progress; with others busy, `inFlight` divided by their number plus one (at least one): a share
 * stays free, so that a quiet tenant's write meets as little of a flood's work as the budget allows. The next `queued`
 * wait their turn in order, any beyond are refused (429). A flood thus waits at the edge, not in the ledger's queues
 * where another tenant's writes would wait behind it, and holds fewer of the ledger's places while others write.
 */
export class TenantAdmission {
  private readonly tenants = new Map<string, Tenant>();

  private readonly inFlight: number;
  private readonly queued: number;
  private readonly waitMs: number;
  private readonly busyMs: number;

  constructor(inFlight: number, queued: number, waitMs: number, busyMs: number) {
    this.inFlight = inFlight;
    this.queued = queued;
    this.waitMs = waitMs;
    this.busyMs = busyMs;
  }

  /** How many requests one busy tenant may have in progress now. */
  share(): number {
    const busy = this.tenants.size;
    return busy <= 1 ? this.inFlight : Math.max(1, Math.floor(this.inFlight / (busy + 1)));
  }

  /** Resolves once the request may run; its slot is freed when `closing` closes. */
  admit(tenantId: string, closing: Closing): Promise<void> {
    const tenant = this.tenants.get(tenantId) ?? { running: 0, waiting: [] };
    clearTimeout(tenant.idle);
    tenant.idle = undefined;
    this.tenants.set(tenantId, tenant);
    if (tenant.running < this.share()) {
      tenant.running += 1;
      closing.once('close', () => this.release(tenantId));
      return Promise.resolve();
    }
    if (tenant.waiting.length >= this.queued) {
      throw new RateLimitedError(
        `this tenant has ${tenant.running} requests in progress and ${tenant.waiting.length} waiting, the most it may have; retry when one has been answered`,
        1,
      );
    }
    return new Promise<void>((resolve, reject) => {
      let granted = false;
      const leave = () => {
        const at = tenant.waiting.indexOf(turn);
        if (at >= 0) tenant.waiting.splice(at, 1);
      };
      // The tenant's requests in progress are slow (a dependency struggling, a heavy job): an answer now, not a hang.
      const timer = setTimeout(() => {
        leave();
        reject(
          new RateLimitedError(
            `this tenant's ${tenant.running} requests in progress kept this one waiting ${this.waitMs / 1000} s; retry shortly`,
            1,
          ),
        );
      }, this.waitMs);
      const turn = () => {
        granted = true;
        clearTimeout(timer);
        resolve();
      };
      tenant.waiting.push(turn);
      closing.once('close', () => {
        clearTimeout(timer);
        if (granted) this.release(tenantId);
        else leave();
      });
    });
  }

  /** A slot is free: the tenant's next waiting request takes it, unless the tenant holds more than its share now. */
  private release(tenantId: string): void {
    const tenant = this.tenants.get(tenantId);
    if (!tenant) return;
    const next = tenant.running <= this.share() ? tenant.waiting.shift() : undefined;
    if (next) return next();
    tenant.running -= 1;
    this.idleLater(tenantId, tenant);
  }

  /**
   * A tenant with nothing in progress or waiting stops counting as busy `busyMs` later; the others' shares grow. Only an
   * answer can leave it so: a tenant with a request waiting has at least one in progress (it waits only at its share,
   * and gives a slot back only above it).
   */
  private idleLater(tenantId: string, tenant: Tenant): void {
    if (tenant.running > 0 || tenant.waiting.length > 0 || tenant.idle) return;
    tenant.idle = setTimeout(() => {
      this.tenants.delete(tenantId);
      this.grantShares();
    }, this.busyMs);
    tenant.idle.unref();
  }

  /** Waiting requests take the slots a larger share gives their tenants. */
  private grantShares(): void {
    const share = this.share();
    for (const tenant of this.tenants.values()) {
      while (tenant.running < share && tenant.waiting.length > 0) {
        tenant.running += 1;
        tenant.waiting.shift()?.();
      }
    }
  }
}
