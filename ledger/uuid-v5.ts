import { hash as oneShotHash } from 'node:crypto';

const namespaces = new Map<string, Buffer>();

/**
 * RFC 9562 name-based UUID (version 5, SHA-1), as the `uuid` package's v5 gives it, without its detour through byte
 * arrays: every event and follower command id is one, so on the write path it is worth a few lines of our own. The
 * one-shot `crypto.hash` over namespace and name in one buffer: a `createHash` object per id cost 2.3–3.0 µs, this
 * 1.4–1.7 µs (the processor thread spent about 2.4 s of a 100 000-item import hashing).
 */
export function uuidv5(name: string, namespace: string): string {
  let space = namespaces.get(namespace);
  if (!space) {
    space = Buffer.from(namespace.replace(/-/g, ''), 'hex');
    namespaces.set(namespace, space);
  }
  const input = Buffer.allocUnsafe(16 + Buffer.byteLength(name, 'utf8'));
  space.copy(input, 0);
  input.write(name, 16, 'utf8');
  const hash = oneShotHash('sha1', input, 'buffer');
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
