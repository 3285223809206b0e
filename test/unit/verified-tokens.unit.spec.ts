import { describe, expect, it } from 'vitest';
import { VerifiedTokens } from '../../http/plugins/verified-tokens.ts';

const at = Date.UTC(2026, 10, 23, 12, 0, 0);
const exp = (ms: number) => ({ sub: 'u', exp: Math.floor(ms / 1000) });

describe('VerifiedTokens', () => {
  it('answers a remembered token until the earlier of its exp and the maximum age', () => {
    const tokens = new VerifiedTokens(10, 60_000);
    tokens.remember('a', exp(at + 3_600_000), at);
    tokens.remember('b', exp(at + 10_000), at);
    expect(tokens.get('a', at + 59_999)).toEqual(exp(at + 3_600_000));
    expect(tokens.get('a', at + 60_000)).toBeUndefined();
    expect(tokens.get('b', at + 9_999)).toEqual(exp(at + 10_000));
    expect(tokens.get('b', at + 10_000)).toBeUndefined();
    expect(tokens.size).toBe(0);
  });

  it('never answers a token it was not given, nor one already expired or without exp', () => {
    const tokens = new VerifiedTokens(10, 60_000);
    tokens.remember('expired', exp(at - 1_000), at);
    tokens.remember('no-exp', { sub: 'u' }, at);
    expect(tokens.get('expired', at)).toBeUndefined();
    expect(tokens.get('no-exp', at)).toBeUndefined();
    expect(tokens.get('other', at)).toBeUndefined();
    expect(tokens.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the oldest', () => {
    const tokens = new VerifiedTokens(2, 60_000);
    tokens.remember('1', exp(at + 3_600_000), at);
    tokens.remember('2', exp(at + 3_600_000), at);
    tokens.remember('3', exp(at + 3_600_000), at);
    expect(tokens.size).toBe(2);
    expect(tokens.get('1', at)).toBeUndefined();
    expect(tokens.get('3', at)).toBeDefined();
  });
});
