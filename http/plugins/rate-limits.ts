import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { z } from 'zod';
import { RateLimitedError } from '../errors.ts';
import type { rateLimitSettings } from '../rate-limit-config.ts';
import { CostWindows } from '../rate-limit-store.ts';
import { TenantAdmission } from '../tenant-admission.ts';

type RateLimitConfig = z.infer<z.ZodObject<typeof rateLimitSettings.shape>>;
type Checked = Exclude<Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>, { isAllowed: true }>;

/** One budget: its key per request (which names the budget, as every limiter shares one store) and its size. */
type Budget = {
  /** What the budget counts, for the refusal's message: "requests of this tenant". */
  counts: string;
  key: (request: FastifyRequest) => string;
  max: number;
  check: ReturnType<FastifyInstance['createRateLimit']>;
};

export type RateLimits = {
  /** After authentication: the tenant's admission (requests in progress), then its and its organization's budgets. */
  admitTenant: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** Charges `count` writes more to the request's tenant and organization: a bulk job's items beyond its request. */
  chargeWrites: (request: FastifyRequest, reply: FastifyReply, count: number) => void;
  /** POST /unified/webhook, before anything else: refused while its source address has spent its unverified budget. */
  webhookAddress: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** POST /unified/webhook, once answered: a delivery that did not verify (400, 401) costs its source address one. */
  chargeUnverified: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** A public route that reads the database (a tenant's UCP profile): its source address's budget. */
  publicAddress: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** POST /unified/webhook, once verified: the connection's budget. */
  webhookConnection: (request: FastifyRequest, reply: FastifyReply, connectionId: string) => Promise<void>;
};

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The edge's rate limits (docs/decisions.md, "Rate limits and fairness"), with @fastify/rate-limit's limiters over one
 * store (`CostWindows`), so a bulk job's items are charged to the same budgets as single writes. Every answer of a
 * limited route carries the tightest budget's `RateLimit-Limit`, `-Remaining` and `-Reset` (the IETF draft's fields,
 * as the plugin's `enableDraftSpec` names them) and `RateLimit-Policy` naming every budget checked; a 429 adds
 * `Retry-After` and the one error body.
 */
export const rateLimitsPlugin = fp(
  async (app: FastifyInstance, config: RateLimitConfig) => {
    const store = new CostWindows();
    await app.register(rateLimit, { global: false, enableDraftSpec: true, store: storeOf(store) });
    const windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    const budget = (name: string, counts: string, max: number, id: (request: FastifyRequest) => string): Budget => {
      const key = (request: FastifyRequest) => `${name}:${id(request)}`;
      return { counts, key, max, check: app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: key }) };
    };
    const tenant = (request: FastifyRequest) => request.principal.tenantId;
    const org = (request: FastifyRequest) => `${request.principal.tenantId}/${request.principal.orgId}`;
    const requests = [
      budget('tenant-requests', 'requests of this tenant', config.RATE_LIMIT_TENANT_REQUESTS, tenant),
      budget('org-requests', 'requests of this organization', config.RATE_LIMIT_ORG_REQUESTS, org),
    ];
    const writes = [
      budget('tenant-writes', 'writes of this tenant', config.RATE_LIMIT_TENANT_WRITES, tenant),
      budget('org-writes', 'writes of this organization', config.RATE_LIMIT_ORG_WRITES, org),
    ];
    // The client's address (IPv6 by /64): behind a trusted proxy, the one its X-Forwarded-For names (TRUST_PROXY).
    const sourceAddress = (request: FastifyRequest) => normalizeIP(request.ip);
    const address = budget('webhook-address', 'unverified deliveries from this address', config.RATE_LIMIT_WEBHOOK_ADDRESS, sourceAddress);
    const publicAddress = budget('public-address', 'requests from this address', config.RATE_LIMIT_PUBLIC_ADDRESS, sourceAddress);
    const connection = budget(
      'webhook-connection',
      'deliveries of this connection',
      config.RATE_LIMIT_WEBHOOK_CONNECTION,
      (request) => request.webhookConnection ?? '',
    );
    app.decorateRequest('webhookConnection', undefined);

    const policy = (budgets: Budget[]) => budgets.map(({ max }) => `${max};w=${config.RATE_LIMIT_WINDOW_SECONDS}`).join(', ');

    /** Checks `budgets` in turn (charging each unless `peek`), sets the headers, and refuses the first one spent. */
    const limit = async (request: FastifyRequest, reply: FastifyReply, budgets: Budget[], peek = false): Promise<void> => {
      const results: Checked[] = [];
      for (const { check, counts } of budgets) {
        const result = await check(request, { increment: !peek });
        if (result.isAllowed) continue;
        results.push(result);
        if (result.isExceeded || (peek && result.remaining === 0)) {
          setHeaders(reply, result, policy(budgets));
          throw refusal(counts, result.max, secondsOf(result));
        }
      }
      const tightest = results.reduce<Checked | undefined>((a, b) => (a && a.remaining <= b.remaining ? a : b), undefined);
      if (tightest) setHeaders(reply, tightest, policy(budgets));
    };

    const admission = new TenantAdmission(
      config.RATE_LIMIT_TENANT_IN_FLIGHT,
      config.RATE_LIMIT_TENANT_QUEUED,
      config.RATE_LIMIT_TENANT_WAIT_MS,
      config.RATE_LIMIT_TENANT_BUSY_MS,
    );

    const limits: RateLimits = {
      admitTenant: async (request, reply) => {
        const budgets = WRITE_METHODS.has(request.method) ? [...requests, ...writes] : requests;
        await limit(request, reply, budgets, true);
        await admission.admit(request.principal.tenantId, reply.raw);
        await limit(request, reply, budgets);
      },
      chargeWrites: (request, reply, count) => {
        if (count <= 0) return;
        for (const { key, max, counts } of writes) {
          const { current, ttl } = store.charge(key(request), count, windowMs, max);
          const charged = { max, remaining: Math.max(0, max - current), ttlInSeconds: Math.ceil(ttl / 1000) };
          const shown = Number(reply.getHeader('ratelimit-remaining') ?? Infinity);
          if (current > max || charged.remaining < shown) setHeaders(reply, charged, policy([...requests, ...writes]));
          if (current > max) throw refusal(counts, max, secondsOf(charged));
        }
      },
      webhookAddress: (request, reply) => limit(request, reply, [address], true),
      chargeUnverified: async (request, reply) => {
        if (reply.statusCode === 400 || reply.statusCode === 401) await address.check(request);
      },
      publicAddress: (request, reply) => limit(request, reply, [publicAddress]),
      webhookConnection: async (request, reply, connectionId) => {
        request.webhookConnection = connectionId;
        await limit(request, reply, [connection]);
      },
    };
    app.decorate('rateLimits', limits);
  },
  { name: 'rate-limits' },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified connection of a webhook delivery, which its budget is keyed by. */
    webhookConnection: string | undefined;
  }
}

/** @fastify/rate-limit constructs its store: this one hands it ours. */
function storeOf(store: CostWindows) {
  return function SharedStore() {
    return store;
  } as unknown as new () => CostWindows;
}

type Standing = Pick<Checked, 'max' | 'remaining' | 'ttlInSeconds'>;

const secondsOf = (result: Standing) => Math.max(1, result.ttlInSeconds);

function setHeaders(reply: FastifyReply, result: Standing, policy: string): void {
  reply.header('ratelimit-limit', result.max);
  reply.header('ratelimit-remaining', result.remaining);
  reply.header('ratelimit-reset', secondsOf(result));
  reply.header('ratelimit-policy', policy);
}

function refusal(counts: string, max: number, after: number): RateLimitedError {
  return new RateLimitedError(`the ${counts} are over their rate limit (${max} per window); retry in ${after} s`, after);
}
