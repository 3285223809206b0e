import { describe, expect, it } from 'vitest';
import type { BulkJobType } from '../../commands/bulk/bulk-job.ts';
import { bulkItemsOf, chunksOf, payloadTextBytes, payloadTextPieces, payloadValue } from '../../http/bulk-payload.ts';
import { PayloadTooLargeError, ValidationError } from '../../ledger/errors.ts';

const [a, b, c] = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', '33333333-3333-4333-8333-333333333333'];
const MAX = 100;

describe('bulk payload shapes', () => {
  const accepted: [BulkJobType, string, unknown, unknown[]][] = [
    ['BULK_IMPORT', 'an array of product objects', [{ title: 'A' }, { title: 'B', sku: 'S' }], [{ title: 'A' }, { title: 'B', sku: 'S' }]],
    ['BULK_IMPORT', '{ items }', { items: [{ title: 'A' }, {}] }, [{ title: 'A' }, {}]],
    // the items' own fields are judged when the job runs
    ['BULK_IMPORT', 'objects with any fields', [{ nope: 1 }], [{ nope: 1 }]],
    [
      'BULK_UPDATE',
      'an array of objects with id',
      [{ id: a, title: 'A' }, { id: 'not-a-uuid' }],
      [{ id: a, title: 'A' }, { id: 'not-a-uuid' }],
    ],
    [
      'BULK_UPDATE',
      '{ ids, set }',
      { ids: [a, b, c], set: { title: 'Same', brand: 'Acme' } },
      [
        { title: 'Same', brand: 'Acme', id: a },
        { title: 'Same', brand: 'Acme', id: b },
        { title: 'Same', brand: 'Acme', id: c },
      ],
    ],
    ['BULK_DELETE', 'an array of ids', [a, b], [{ id: a }, { id: b }]],
    ['BULK_DELETE', 'an array of objects with id', [{ id: a }, { id: b }], [{ id: a }, { id: b }]],
    ['BULK_DELETE', 'ids and objects mixed', [a, { id: b }], [{ id: a }, { id: b }]],
    ['BULK_DELETE', '{ ids }', { ids: [a, b, c] }, [{ id: a }, { id: b }, { id: c }]],
  ];
  it.each(accepted)('%s accepts %s', (jobType, _shape, payload, items) => {
    expect(bulkItemsOf(jobType, payload, MAX)).toEqual(items);
  });

  it('deletes by the id of whole product objects, their other fields ignored', () => {
    const id = '0b6f2a44-7d3e-4c1a-9f5e-2d8c6b4a1e90';
    expect(bulkItemsOf('BULK_DELETE', [{ id, title: 'A', sku: 'S' }], 10)).toEqual([{ id }]);
  });

  it('keeps the order of the items', () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ title: `T${i}` }));
    expect(bulkItemsOf('BULK_IMPORT', many, MAX)).toEqual(many);
    const ids = Array.from({ length: 20 }, (_, i) => `id-${i}`);
    expect(bulkItemsOf('BULK_DELETE', { ids }, MAX)).toEqual(ids.map((id) => ({ id })));
    expect(bulkItemsOf('BULK_UPDATE', { ids, set: { title: 'x' } }, MAX)).toEqual(ids.map((id) => ({ title: 'x', id })));
  });

  const refused: [BulkJobType, string, unknown][] = [
    ['BULK_IMPORT', 'an empty array', []],
    ['BULK_IMPORT', 'an empty { items }', { items: [] }],
    ['BULK_IMPORT', 'string items', ['a', 'b']],
    ['BULK_IMPORT', 'a number item', [{ title: 'A' }, 3]],
    ['BULK_IMPORT', 'a null item', [null]],
    ['BULK_IMPORT', 'an array item', [[{ title: 'A' }]]],
    ['BULK_IMPORT', 'a single product object', { title: 'A' }],
    ['BULK_IMPORT', '{ items } with another key', { items: [{ title: 'A' }], extra: 1 }],
    ['BULK_IMPORT', 'a number', 42],
    ['BULK_IMPORT', 'null', null],
    ['BULK_UPDATE', 'an empty array', []],
    ['BULK_UPDATE', 'an item without id', [{ id: a, title: 'A' }, { title: 'B' }]],
    ['BULK_UPDATE', 'a string item', [a]],
    ['BULK_UPDATE', '{ ids } without set', { ids: [a] }],
    ['BULK_UPDATE', '{ ids, set } with an empty set', { ids: [a], set: {} }],
    ['BULK_UPDATE', '{ ids, set } with a set holding id', { ids: [a], set: { id: b, title: 'A' } }],
    ['BULK_UPDATE', '{ ids, set } with a set that is no object', { ids: [a], set: 'title' }],
    ['BULK_UPDATE', '{ ids, set } with an array set', { ids: [a], set: [{ title: 'A' }] }],
    ['BULK_UPDATE', '{ ids, set } with another key', { ids: [a], set: { title: 'A' }, extra: 1 }],
    ['BULK_UPDATE', '{ ids, set } without ids', { set: { title: 'A' } }],
    ['BULK_UPDATE', '{ ids, set } with empty ids', { ids: [], set: { title: 'A' } }],
    ['BULK_UPDATE', 'a number', 7],
    ['BULK_DELETE', 'an empty array', []],
    ['BULK_DELETE', 'an empty { ids }', { ids: [] }],
    ['BULK_DELETE', 'number ids', [1, 2]],
    ['BULK_DELETE', 'an object without id', [{ productId: a }]],
    ['BULK_DELETE', '{ ids, set }', { ids: [a], set: { title: 'A' } }],
    ['BULK_DELETE', '{ ids } with another key', { ids: [a], extra: true }],
    ['BULK_DELETE', 'ids that are not an array', { ids: a }],
    ['BULK_DELETE', 'a single id', a],
    ['BULK_DELETE', 'a number', 5],
  ];
  it.each(refused)('%s refuses %s', (jobType, _shape, payload) => {
    expect(() => bulkItemsOf(jobType, payload, MAX)).toThrow(ValidationError);
  });

  it('refuses more items than the limit, and takes as many as it', () => {
    const items = Array.from({ length: MAX + 1 }, (_, i) => ({ title: `T${i}` }));
    expect(() => bulkItemsOf('BULK_IMPORT', items, MAX)).toThrow(PayloadTooLargeError);
    expect(() => bulkItemsOf('BULK_IMPORT', items, MAX)).not.toThrow(ValidationError);
    expect(bulkItemsOf('BULK_IMPORT', items.slice(0, MAX), MAX)).toHaveLength(MAX);
    const ids = Array.from({ length: 3 }, (_, i) => `id-${i}`);
    expect(() => bulkItemsOf('BULK_DELETE', { ids }, 2)).toThrow(PayloadTooLargeError);
    expect(() => bulkItemsOf('BULK_UPDATE', { ids, set: { title: 'x' } }, 2)).toThrow(PayloadTooLargeError);
  });
});

describe('a payload given as JSON text', () => {
  it('parses a string', () => {
    const text = '[{"title":"A"},{"title":"B"}]';
    expect(payloadValue(text)).toEqual([{ title: 'A' }, { title: 'B' }]);
    expect(bulkItemsOf('BULK_IMPORT', payloadValue(text), MAX)).toEqual([{ title: 'A' }, { title: 'B' }]);
    expect(payloadValue(`{"ids":["${a}"]}`)).toEqual({ ids: [a] });
  });

  it('takes any other value as it is', () => {
    const value = { ids: [a], set: { title: 'A' } };
    expect(payloadValue(value)).toBe(value);
  });

  it('refuses a string that is not JSON', () => {
    for (const text of ['not json', '[{"title":"A"}', '', "{'ids': []}"]) expect(() => payloadValue(text)).toThrow(ValidationError);
  });

  it('refuses JSON text whose value fits no shape', () => {
    expect(() => bulkItemsOf('BULK_IMPORT', payloadValue('"[]"'), MAX)).toThrow(ValidationError);
    expect(() => bulkItemsOf('BULK_DELETE', payloadValue('12'), MAX)).toThrow(ValidationError);
  });
});

describe('the payload’s text (payload_json), piece by piece', () => {
  const text = (payload: unknown) => [...payloadTextPieces(payload)].join('');
  const wide = { title: 'ü😀'.repeat(3), n: 1.5, tags: ['a', 'b'], nested: { x: null } };

  it.each([
    ['an array of items', [{ title: 'A' }, wide, { title: 'B', sku: 'S-1' }]],
    ['an array of ids', [a, a]],
    ['the items wrapped', { items: [{ title: 'A' }, wide] }],
    ['ids and a field set', { ids: [a], set: { title: 'A' } }],
    ['an object with items beside another field', { items: [{ title: 'A' }], other: 1 }],
    ['an empty array', []],
  ])('is what JSON.stringify writes for %s, its bytes counted', (_, payload) => {
    expect(text(payload)).toBe(JSON.stringify(payload));
    expect(payloadTextBytes(payload)).toBe(Buffer.byteLength(JSON.stringify(payload)));
  });

  it('is a string payload as it came, in pieces that never part a surrogate pair', () => {
    const long = `[${Array.from({ length: 40_000 }, (_, i) => `{"title":"${'😀'.repeat(i % 5)}x"}`).join(',')}]`;
    const pieces = [...payloadTextPieces(long)];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(long);
    for (const piece of pieces) expect(piece).toBe(Buffer.from(piece, 'utf8').toString('utf8'));
    expect(payloadTextBytes(long)).toBe(Buffer.byteLength(long));
  });

  it('is made as it is taken: an array’s elements one at a time', () => {
    const items = [{ title: 'A' }, { title: 'B' }];
    const pieces = payloadTextPieces(items);
    expect(pieces.next().value).toBe('[');
    expect(pieces.next().value).toBe('{"title":"A"}');
    items[1] = { title: 'changed after the first was taken' };
    expect([...pieces].join('')).toBe(',{"title":"changed after the first was taken"}]');
  });
});

describe('chunks of items', () => {
  const chunked = (items: unknown[], maxBytes: number) => [...chunksOf(items, maxBytes)];
  const items = Array.from({ length: 200 }, (_, i) => ({ title: `Product ${i}`, description: 'x'.repeat(i % 37), sku: `S-${i}` }));
  const bytes = (text: string) => Buffer.byteLength(text);

  it.each([64, 200, 1_000, 4_096, 1_000_000])('cuts the items in order, each chunk at most %i bytes', (maxBytes) => {
    const chunks = chunked(items, maxBytes);
    expect(chunks.map((chunk) => chunk.chunk)).toEqual(chunks.map((_, i) => i));
    let next = 0;
    for (const chunk of chunks) {
      const parsed = JSON.parse(chunk.items) as unknown[];
      expect(parsed).toEqual(items.slice(chunk.firstIndex, chunk.firstIndex + chunk.itemCount));
      expect(chunk.firstIndex).toBe(next);
      expect(chunk.itemCount).toBe(parsed.length);
      expect(chunk.itemCount).toBeGreaterThan(0);
      // A chunk of several items stays within the limit, brackets and commas counted.
      if (chunk.itemCount > 1) expect(bytes(chunk.items)).toBeLessThanOrEqual(maxBytes);
      next += chunk.itemCount;
    }
    expect(next).toBe(items.length);
    expect(chunks.flatMap((chunk) => JSON.parse(chunk.items) as unknown[])).toEqual(items);
  });

  it('fills chunks: two neighbours together would not fit', () => {
    const maxBytes = 500;
    const chunks = chunked(items, maxBytes);
    expect(chunks.length).toBeGreaterThan(1);
    for (const [i, chunk] of chunks.slice(0, -1).entries()) {
      const nextItem = JSON.stringify(items[chunks[i + 1]?.firstIndex ?? 0]);
      expect(bytes(chunk.items) + bytes(nextItem) + 1).toBeGreaterThan(maxBytes);
    }
  });

  it('counts the brackets and commas: two items of 13 bytes do not fit 28', () => {
    const chunks = chunked([{ title: 'a' }, { title: 'b' }], 28);
    expect(chunks.map((c) => c.items)).toEqual(['[{"title":"a"}]', '[{"title":"b"}]']);
    expect(chunked([{ title: 'a' }, { title: 'b' }], 29)).toHaveLength(1);
  });

  it('puts an item larger than the limit in a chunk alone', () => {
    const big = { title: 'Big', description: 'y'.repeat(300) };
    const mixed = [{ title: 'a' }, { title: 'b' }, big, { title: 'c' }];
    const chunks = chunked(mixed, 100);
    expect(chunks).toEqual([
      { chunk: 0, firstIndex: 0, itemCount: 2, items: JSON.stringify(mixed.slice(0, 2)) },
      { chunk: 1, firstIndex: 2, itemCount: 1, items: JSON.stringify([big]) },
      { chunk: 2, firstIndex: 3, itemCount: 1, items: JSON.stringify([mixed[3]]) },
    ]);
  });

  it('counts bytes, not characters', () => {
    const wide = Array.from({ length: 10 }, () => ({ title: 'ü'.repeat(20) }));
    const maxBytes = 150;
    for (const chunk of chunked(wide, maxBytes)) {
      if (chunk.itemCount > 1) expect(bytes(chunk.items)).toBeLessThanOrEqual(maxBytes);
    }
    expect(chunked(wide, maxBytes).length).toBeGreaterThan(
      chunked(
        wide.map(() => ({ title: 'u'.repeat(20) })),
        maxBytes,
      ).length,
    );
  });

  it('makes one chunk of items that fit, and none of no item', () => {
    expect(chunked([{ title: 'a' }], 1_000)).toEqual([{ chunk: 0, firstIndex: 0, itemCount: 1, items: '[{"title":"a"}]' }]);
    expect(chunked([], 1_000)).toEqual([]);
  });
});
