import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CompressedFile } from '../../consumers/feed/compressed-file.ts';

describe('CompressedFile', () => {
  it('keeps the gzip of every byte written, in order, however it came in pieces', async () => {
    const file = new CompressedFile();
    const pieces = Array.from({ length: 3_000 }, (_, i) => Buffer.from(`{"line":${i},"noise":"${randomBytes(200).toString('base64')}"}\n`));
    for (const piece of pieces) {
      file.write(piece);
      await file.caughtUp();
    }
    const compressed = await file.end();
    const whole = Buffer.concat(pieces);
    expect(gunzipSync(compressed).equals(whole)).toBe(true);
    expect(compressed.length).toBeLessThan(whole.length);
  });

  it('is a valid empty gzip when nothing was written, and can be discarded without a trace', async () => {
    expect(gunzipSync(await new CompressedFile().end()).length).toBe(0);
    const dropped = new CompressedFile();
    dropped.write(Buffer.from('half a file'));
    dropped.discard();
    await new Promise((resolve) => setImmediate(resolve));
  });
});
