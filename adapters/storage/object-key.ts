/**
 * Why `key` is not a key every store accepts, or undefined when it is: `/`-separated relative segments, none empty,
 * `.` or `..`, none starting with `.` (the filesystem store keeps its temporary and metadata files under such names),
 * no backslash or control character, at most 1 024 bytes (S3's limit).
 */
export function keyProblem(key: string): string | undefined {
  if (key === '') return 'is empty';
  if (Buffer.byteLength(key) > 1024) return 'is longer than 1024 bytes';
  if (key.startsWith('/')) return 'is absolute (starts with /)';
  if (/[\\\u0000-\u001f\u007f]/.test(key)) return 'contains a backslash or a control character';
  for (const segment of key.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment`;
    if (segment.startsWith('.')) return `has a segment starting with "." (${segment})`;
  }
  return undefined;
}

/** Refuses a key no store takes (an Error naming it and why). */
export function assertValidKey(key: string): void {
  const problem = keyProblem(key);
  if (problem) throw new Error(`invalid object key ${JSON.stringify(key)}: ${problem}`);
}

/** `attachment` with the name both as ASCII (older clients) and as RFC 5987 UTF-8. */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
