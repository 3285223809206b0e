import { describe, expect, it } from 'vitest';
import { keyProblem } from '../../adapters/storage/object-key.ts';
import { signDownload, signedDownloadUrl, verifyDownload } from '../../adapters/storage/signed-url.ts';

const SECRET = 'unit-test-secret-of-at-least-32-characters';
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const EXPIRES = NOW / 1000 + 600;

/** What the route reads from a link: the path after /files/ (decoded, as fastify gives it) and the query. */
function parse(url: string) {
  const { pathname, searchParams } = new URL(url);
  return {
    key: decodeURIComponent(pathname.replace(/^\/files\//, '')),
    expires: searchParams.get('expires') ?? undefined,
    filename: searchParams.get('filename') ?? undefined,
    signature: searchParams.get('signature') ?? undefined,
  };
}

describe('signed download links', () => {
  it('has the documented shape: <base>/files/<key>?expires=<unix>[&filename=…]&signature=<64 hex>', () => {
    const url = signedDownloadUrl('https://ledger.example/', SECRET, {
      key: 't1/exports/a b.jsonl.gz',
      expires: EXPIRES,
      filename: 'x.gz',
    });
    expect(url).toBe(
      `https://ledger.example/files/t1/exports/a%20b.jsonl.gz?expires=${EXPIRES}&filename=x.gz&signature=${signDownload(SECRET, {
        key: 't1/exports/a b.jsonl.gz',
        expires: EXPIRES,
        filename: 'x.gz',
      })}`,
    );
    expect(parse(url).signature).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies a link it made, with or without a file name', () => {
    for (const filename of [undefined, 'catalog.jsonl.gz', 'ünïcode name.json']) {
      const url = signedDownloadUrl('http://127.0.0.1:3000', SECRET, { key: 'tenant/feeds/abc.json', expires: EXPIRES, filename });
      expect(verifyDownload(SECRET, parse(url), NOW)).toBe('valid');
    }
  });

  it('refuses a link whose key, expiry, file name or signature was changed, or that another secret signed', () => {
    const url = signedDownloadUrl('http://127.0.0.1:3000', SECRET, {
      key: 'tenant-a/feeds/abc.json',
      expires: EXPIRES,
      filename: 'a.json',
    });
    const link = parse(url);
    const flipped = `${link.signature![0] === 'a' ? 'b' : 'a'}${link.signature!.slice(1)}`;
    const tampered = [
      { ...link, key: 'tenant-b/feeds/abc.json' },
      { ...link, expires: String(EXPIRES + 3600) },
      { ...link, filename: 'b.json' },
      { ...link, filename: undefined },
      { ...link, signature: flipped },
      { ...link, signature: link.signature!.toUpperCase() },
      { ...link, signature: link.signature!.slice(0, 62) },
      { ...link, signature: undefined },
      { ...link, expires: undefined },
      { ...link, expires: '1e12' },
      { ...link, expires: '-1' },
    ];
    for (const candidate of tampered) expect(verifyDownload(SECRET, candidate, NOW)).toBe('invalid');
    expect(verifyDownload('another-secret-of-at-least-32-characters', link, NOW)).toBe('invalid');
  });

  it('a genuine link stops working at its expiry', () => {
    const link = parse(signedDownloadUrl('http://h', SECRET, { key: 'k', expires: EXPIRES }));
    expect(verifyDownload(SECRET, link, EXPIRES * 1000 - 1)).toBe('valid');
    expect(verifyDownload(SECRET, link, EXPIRES * 1000)).toBe('expired');
  });

  it('a forged link reads as invalid even once expired (the clock is not revealed to forgers)', () => {
    const link = parse(signedDownloadUrl('http://h', SECRET, { key: 'k', expires: EXPIRES }));
    expect(verifyDownload(SECRET, { ...link, key: 'other' }, EXPIRES * 1000 + 1)).toBe('invalid');
  });
});

describe('object keys', () => {
  it.each(['a', 'tenant/exports/2026-01-01T00-00-00Z.jsonl.gz', 'a b/ü.json', 'x'.repeat(1024)])('accepts %j', (key) => {
    expect(keyProblem(key)).toBeUndefined();
  });
  it.each(['', '/a', 'a/../b', '..', 'a//b', 'a/', '.hidden', 'a/.b', 'a\\b', 'a\nb', 'x'.repeat(1025)])('refuses %j', (key) => {
    expect(keyProblem(key)).toBeDefined();
  });
});
