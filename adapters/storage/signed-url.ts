import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a download link of the filesystem store names and proves. `expires`: unix seconds. */
export type DownloadGrant = { key: string; expires: number; filename?: string };

export type Verdict = 'valid' | 'expired' | 'invalid';

/** Fields separated by a newline, which no key (nor a sane file name) holds: `a` + `b1` never signs like `ab` + `1`. */
export function signDownload(secret: string, { key, expires, filename }: DownloadGrant): string {
  return createHmac('sha256', secret)
    .update(`${key}\n${expires}\n${filename ?? ''}`)
    .digest('hex');
}

/** `<base>/files/<key, each segment percent-encoded>?expires=…[&filename=…]&signature=…` */
export function signedDownloadUrl(publicBaseUrl: string, secret: string, grant: DownloadGrant): string {
  const path = grant.key.split('/').map(encodeURIComponent).join('/');
  const query = new URLSearchParams({ expires: String(grant.expires) });
  if (grant.filename !== undefined) query.set('filename', grant.filename);
  query.set('signature', signDownload(secret, grant));
  return `${publicBaseUrl.replace(/\/+$/, '')}/files/${path}?${query.toString()}`;
}

/**
 * Checks a link's signature (in constant time) before its expiry, so a forged link learns nothing about the clock.
 * `expires` and `signature` as they came in the query; `now` in milliseconds.
 */
export function verifyDownload(
  secret: string,
  link: { key: string; expires: string | undefined; filename?: string; signature: string | undefined },
  now = Date.now(),
): Verdict {
  if (link.expires === undefined || link.signature === undefined || !/^[0-9]{1,12}$/.test(link.expires)) return 'invalid';
  if (!/^[0-9a-f]{64}$/.test(link.signature)) return 'invalid';
  const expires = Number(link.expires);
  const expected = Buffer.from(signDownload(secret, { key: link.key, expires, filename: link.filename }), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(link.signature, 'hex'))) return 'invalid';
  return expires * 1000 > now ? 'valid' : 'expired';
}
