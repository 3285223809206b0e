import { createHash } from 'node:crypto';

const namespaces = new Map<string, Buffer>();

/**
 * RFC 9562 name-based UUID (version 5, SHA-1), as the `uuid` package's v5 gives it, without its detour through byte
 * arrays: every event and follower command id is one, so on the write path it is worth a few lines of our own.
 */
export function uuidv5(name: string, namespace: string): string {
  let space = namespaces.get(namespace);
  if (!space) {
    space = Buffer.from(namespace.replace(/-/g, ''), 'hex');
    namespaces.set(namespace, space);
  }
  const hash = createHash('sha1').update(space).update(name, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
