import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../../http/errors.ts';
import { TenantAdmission } from '../../http/tenant-admission.ts';

const BUSY_MS = 1_000;

/** A request of `tenant`: admitted or not yet, and answered with `done`. */
function request(admission: TenantAdmission, tenant: string) {
  const closing = new EventEmitter();
  const state = { admitted: false, refused: undefined as unknown };
  admission.admit(tenant, closing).then(
    () => (state.admitted = true),
    (error: unknown) => (state.refused = error),
  );
  return { state, done: () => closing.emit('close') };
}

const settle = () => new Promise<void>((resolve) => queueMicrotask(resolve)).then(() => undefined);
const admittedOf = (requests: ReturnType<typeof request>[]) => requests.filter((r) => r.state.admitted).length;

describe('TenantAdmission', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('gives a tenant alone the whole budget and lines up the rest in order', async () => {
    const admission = new TenantAdmission(4, 10, 60_000, BUSY_MS);
    const flood = Array.from({ length: 6 }, () => request(admission, 'a'));
    await settle();
    expect(admittedOf(flood)).toBe(4);
    flood[0]?.done();
    await settle();
    expect(flood.map((r) => r.state.admitted)).toEqual([true, true, true, true, true, false]);
  });

  it('cuts a flooding tenant’s requests in progress to its share while another tenant is busy, admitting the other at once', async () => {
    const admission = new TenantAdmission(4, 10, 60_000, BUSY_MS);
    const flood = Array.from({ length: 8 }, () => request(admission, 'a'));
    await settle();
    expect(admittedOf(flood)).toBe(4);
    const quiet = request(admission, 'b');
    await settle();
    expect(quiet.state.admitted).toBe(true);
    // Two busy: the budget of 4 split as if among three, one share kept free.
    expect(admission.share()).toBe(1);
    // The flood's answers free slots its waiting requests do not take until it is within its share.
    for (const answered of flood.slice(0, 3)) answered.done();
    await settle();
    expect(admittedOf(flood)).toBe(4);
    flood[3]?.done();
    await settle();
    expect(admittedOf(flood)).toBe(5);
    expect(flood[4]?.state.admitted).toBe(true);
  });

  it('splits a larger budget among the busy tenants and one more', () => {
    const admission = new TenantAdmission(12, 10, 60_000, BUSY_MS);
    for (const tenant of ['a', 'b', 'c']) void request(admission, tenant);
    expect(admission.share()).toBe(3);
  });

  it('gives the share back once the other tenant has been idle for RATE_LIMIT_TENANT_BUSY_MS', async () => {
    const admission = new TenantAdmission(4, 10, 60_000, BUSY_MS);
    const quiet = request(admission, 'b');
    const flood = Array.from({ length: 8 }, () => request(admission, 'a'));
    await settle();
    expect(admittedOf(flood)).toBe(1);
    quiet.done();
    vi.advanceTimersByTime(BUSY_MS - 1);
    await settle();
    expect(admittedOf(flood)).toBe(1);
    vi.advanceTimersByTime(1);
    await settle();
    expect(admission.share()).toBe(4);
    expect(admittedOf(flood)).toBe(4);
  });

  it('keeps a quiet tenant busy while it writes again within RATE_LIMIT_TENANT_BUSY_MS', async () => {
    const admission = new TenantAdmission(4, 10, 60_000, BUSY_MS);
    const flood = Array.from({ length: 4 }, () => request(admission, 'a'));
    for (let i = 0; i < 5; i++) {
      const quiet = request(admission, 'b');
      await settle();
      expect(quiet.state.admitted).toBe(true);
      quiet.done();
      vi.advanceTimersByTime(BUSY_MS / 2);
      expect(admission.share()).toBe(1);
    }
    for (const r of flood) r.done();
    vi.advanceTimersByTime(BUSY_MS);
    expect(admission.share()).toBe(4);
  });

  it('gives every busy tenant at least one request in progress, however many are busy', async () => {
    const admission = new TenantAdmission(4, 10, 60_000, BUSY_MS);
    const tenants = Array.from({ length: 6 }, (_, i) => request(admission, `t${i}`));
    await settle();
    expect(admission.share()).toBe(1);
    expect(admittedOf(tenants)).toBe(6);
  });

  it('refuses a request beyond the line at once (429, Retry-After 1 s), and one kept waiting too long', async () => {
    const admission = new TenantAdmission(1, 1, 50, BUSY_MS);
    const running = request(admission, 'a');
    const waiting = request(admission, 'a');
    expect(() => admission.admit('a', new EventEmitter())).toThrow(RateLimitedError);
    await settle();
    expect(running.state.admitted).toBe(true);
    vi.advanceTimersByTime(50);
    await settle();
    expect(waiting.state.refused).toBeInstanceOf(RateLimitedError);
    expect((waiting.state.refused as RateLimitedError).message).toMatch(/kept this one waiting 0.05 s/);
  });
});
