import type { BulkJobType } from '../commands/bulk/bulk-job.ts';
import { PayloadTooLargeError, ValidationError } from '../ledger/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

const refused = (message: string) => new ValidationError(`the bulk payload is refused: ${message}`, [{ path: 'body.payload', message }]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasId = (value: unknown) => isObject(value) && 'id' in value;

/**
 * The payload as the JSON value it is: a string is the payload's JSON text (the spec's `payload_json`), which must parse.
 */
export function payloadValue(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload;
  // The body's own depth was bounded by its parser; JSON text inside it gets the same bound before it is parsed.
  if (nestsDeeperThan(payload)) throw refused(`a string payload must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    throw refused('a string payload must be valid JSON');
  }
}

/** Characters of a string payload per piece of its text (a full-size payload is tens of MB). */
const TEXT_PIECE = 256 * 1024;

/**
 * The payload's JSON text (`payload_json`: a string payload as it came, any other as `JSON.stringify` writes it) piece
 * by piece, made as each is taken: an array's elements one by one, never the whole text at once.
 */
export function* payloadTextPieces(payload: unknown): Generator<string> {
  if (typeof payload === 'string') {
    for (let start = 0; start < payload.length;) {
      let end = Math.min(payload.length, start + TEXT_PIECE);
      // A surrogate pair stays in one piece, so each piece is text of its own.
      if (end < payload.length && isHighSurrogate(payload.charCodeAt(end - 1))) end++;
      yield payload.slice(start, end);
      start = end;
    }
  } else if (Array.isArray(payload)) {
    yield '[';
    for (const [i, element] of payload.entries()) yield `${i > 0 ? ',' : ''}${JSON.stringify(element) ?? 'null'}`;
    yield ']';
  } else if (isObject(payload) && Array.isArray(payload.items) && Object.keys(payload).length === 1) {
    yield '{"items":';
    yield* payloadTextPieces(payload.items);
    yield '}';
  } else yield JSON.stringify(payload);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** The bytes of the payload's JSON text, counted piece by piece. */
export function payloadTextBytes(payload: unknown): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  let bytes = 0;
  for (const piece of payloadTextPieces(payload)) bytes += Buffer.byteLength(piece);
  return bytes;
}

/**
 * The items a payload stands for, by the spec's conventions (docs/decisions.md, "Bulk jobs"): an import is an array of
 * product objects (or `{ "items": [...] }`); an update an array of objects with `id`, or `{ "ids": [...], "set": {...} }`
 * applying one field set to many products; a delete an array of ids or id-carrying objects, or `{ "ids": [...] }`.
 * A shape that fits none, or no item at all, is refused whole: no job is made of it. The items' own fields are
 * judged item by item when the job runs, so one bad item fails alone.
 */
export function bulkItemsOf(jobType: BulkJobType, payload: unknown, maxItems: number): unknown[] {
  const items = itemsByShape(jobType, payload);
  if (items.length === 0) throw refused('it holds no item');
  if (items.length > maxItems) throw new PayloadTooLargeError(`a bulk job holds at most ${maxItems} items; this one holds ${items.length}`);
  return items;
}

function itemsByShape(jobType: BulkJobType, payload: unknown): unknown[] {
  switch (jobType) {
    case 'BULK_IMPORT': {
      const items = isObject(payload) && Array.isArray(payload.items) && Object.keys(payload).length === 1 ? payload.items : payload;
      if (!Array.isArray(items) || !items.every(isObject)) throw refused('an import is an array of product objects');
      return items;
    }
    case 'BULK_UPDATE': {
      if (Array.isArray(payload)) {
        if (!payload.every(hasId)) throw refused('an update is an array of objects each carrying the id of the product to change');
        return payload;
      }
      const { ids, set } = fieldSet(payload);
      if (!isObject(set) || Object.keys(set).length === 0 || 'id' in set) {
        throw refused('an update object is { "ids": [...], "set": { fields to change } }');
      }
      return ids.map((id) => ({ ...set, id }));
    }
    case 'BULK_DELETE': {
      const ids = Array.isArray(payload) ? payload : fieldSet(payload, false).ids;
      if (!ids.every((entry) => typeof entry === 'string' || hasId(entry))) {
        throw refused('a delete is an array of product ids or of objects carrying them');
      }
      return ids.map((entry) => (typeof entry === 'string' ? { id: entry } : { id: (entry as { id: unknown }).id }));
    }
    default: {
      const exhaustive: never = jobType;
      throw refused(`unknown job type ${String(exhaustive)}`);
    }
  }
}

/** `{ "ids": [...], "set": {...} }`: the ids, and the field set when one is expected. */
function fieldSet(payload: unknown, withSet = true): { ids: unknown[]; set?: unknown } {
  const keys = isObject(payload) ? Object.keys(payload).sort().join(',') : '';
  if (!isObject(payload) || !Array.isArray(payload.ids) || keys !== (withSet ? 'ids,set' : 'ids')) {
    throw refused(withSet ? 'an update object is { "ids": [...], "set": {...} }' : 'a delete object is { "ids": [...] }');
  }
  return { ids: payload.ids, set: payload.set };
}

export type BulkChunk = { chunk: number; firstIndex: number; itemCount: number; items: string };

/**
 * The items in order, as chunks of JSON text of at most `maxBytes` each (one item larger than that is a chunk alone),
 * each made as it is taken: the chunks not yet sent, or already sent, are not held.
 */
export function* chunksOf(items: unknown[], maxBytes: number): Generator<BulkChunk> {
  const BRACKETS = 2;
  let texts: string[] = [];
  let bytes = BRACKETS;
  let firstIndex = 0;
  let chunk = 0;
  const close = (): BulkChunk => {
    const made = { chunk: chunk++, firstIndex, itemCount: texts.length, items: `[${texts.join(',')}]` };
    firstIndex += texts.length;
    texts = [];
    bytes = BRACKETS;
    return made;
  };
  for (const item of items) {
    const text = JSON.stringify(item);
    const length = Buffer.byteLength(text);
    // Each item after the first adds a comma.
    if (texts.length > 0 && bytes + 1 + length > maxBytes) yield close();
    bytes += length + (texts.length > 0 ? 1 : 0);
    texts.push(text);
  }
  if (texts.length > 0) yield close();
}
