import type { IncomingMessage } from 'node:http';

/** What the server reads and drops of a body it refused for its size, at most, and for how long. */
const DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 5_000;

/**
 * Reads and drops the rest of a request body refused for its size before the 413 is sent. Answered at once, the
 * response closes the connection while the client is still sending, and many clients (fetch among them) then report
 * the broken pipe, not the answer. A body declared (or sent) beyond DRAIN_BYTES, or one that takes over DRAIN_MS, is
 * not waited for.
 */
export function drainRefusedBody(raw: IncomingMessage): Promise<void> {
  const declared = Number(raw.headers['content-length']);
  if (raw.complete || raw.readableEnded || raw.destroyed || declared > DRAIN_BYTES) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('error', done);
      raw.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MS);
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('error', done);
    raw.once('close', done);
    raw.resume();
  });
}
