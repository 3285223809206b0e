import { Readable } from 'node:stream';

/** Text escaped and written at a time: large enough for few writes, small against the text. */
const WRITE_CHARS = 64 * 1024;

/**
 * `fields` as a JSON object ending with one more string member, `key`, whose text is taken piece by piece as the
 * answer is written: neither the text nor its escaped form is ever whole (a bulk job's `payload_json` is tens of MB,
 * and the answer's string and its buffer were two more copies of it). The bytes are those `JSON.stringify` writes.
 */
export function jsonEndingWithText(fields: Record<string, unknown>, key: string, pieces: Iterable<string>): Readable {
  if (key in fields) throw new Error(`jsonEndingWithText: ${key} is written last, not among the fields`);
  // Ends with `"<key>":""}`: the text goes between the quotes.
  const head = JSON.stringify({ ...fields, [key]: '' });
  function* parts(): Generator<string> {
    yield head.slice(0, -2);
    let held: string[] = [];
    let chars = 0;
    for (const piece of pieces) {
      held.push(piece);
      chars += piece.length;
      if (chars < WRITE_CHARS) continue;
      yield JSON.stringify(held.join('')).slice(1, -1);
      held = [];
      chars = 0;
    }
    yield `${JSON.stringify(held.join('')).slice(1, -1)}"}`;
  }
  return Readable.from(parts());
}
