import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

const PIECE_BYTES = 256 * 1024;

/**
 * A file gzip-compressed as its bytes come, only the compressed bytes kept: a catalog feed's two files for 100 000
 * products with one offer and one image are 132 MB, 5.5 MB compressed, and were held whole, then copied, before.
 */
export class CompressedFile {
  private readonly gzip = createGzip();
  private readonly parts: Buffer[] = [];
  /** Bytes gathered until a piece is worth zlib's turn: a write per product took three times the CPU of one gzip. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly ended: Promise<void>;

  constructor() {
    this.gzip.on('data', (part: Buffer) => this.parts.push(part));
    this.ended = finished(this.gzip);
    // Awaited by `end`; a failure before then surfaces there, never as an unhandled rejection.
    this.ended.catch(() => undefined);
  }

  write(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= PIECE_BYTES) this.flush();
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    this.gzip.write(Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Once zlib has caught up with what was written, so the bytes waiting for it stay bounded. */
  async caughtUp(): Promise<void> {
    if (this.gzip.writableNeedDrain) await once(this.gzip, 'drain');
  }

  async end(): Promise<Buffer> {
    this.flush();
    this.gzip.end();
    await this.ended;
    return Buffer.concat(this.parts);
  }

  discard(): void {
    this.gzip.destroy();
    this.parts.length = 0;
    this.pending = [];
  }
}
