import type { JWTPayload } from 'jose';

/**
 * Bearer tokens verified lately, by their whole text (signature included), so a client that sends the same token
 * again skips the signature check (4 % of the main thread's busy time under POST /products at c=20) but never the clock: an entry
 * lasts until the token's `exp` or `maxAgeMs` after its verification, whichever is first. `maxAgeMs` bounds how long
 * a token whose key was withdrawn from the JWKS is still honoured. Bounded: the oldest entry makes room.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { payload: JWTPayload; until: number }>();

  private readonly maxEntries: number;
  private readonly maxAgeMs: number;

  constructor(maxEntries = 10_000, maxAgeMs = 60_000) {
    this.maxEntries = maxEntries;
    this.maxAgeMs = maxAgeMs;
  }

  get(token: string, now: number): JWTPayload | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until > now) return entry.payload;
    this.entries.delete(token);
    return undefined;
  }

  remember(token: string, payload: JWTPayload, now: number): void {
    const expiresAt = typeof payload.exp === 'number' ? payload.exp * 1000 : now;
    const until = Math.min(expiresAt, now + this.maxAgeMs);
    if (until <= now) return;
    this.entries.delete(token);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(token, { payload, until });
  }

  get size(): number {
    return this.entries.size;
  }
}
