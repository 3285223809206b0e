import { describe, expect, it } from 'vitest';
import { importedProductId, itemCommandId, planItem, refusedItem, type ItemPlan } from '../../commands/bulk/bulk-items.ts';
import type { SerializedDomainError } from '../../ledger/errors.ts';

const jobId = '44444444-4444-4444-8444-444444444444';
const otherJob = '55555555-5555-4555-8555-555555555555';
const productId = '66666666-6666-4666-8666-666666666666';
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const failureOf = (plan: ItemPlan) => {
  if (plan.kind !== 'failed') throw new Error(`expected a failure, got ${JSON.stringify(plan)}`);
  return plan.failure;
};

describe('item ids', () => {
  it('gives an imported item the same product id for the same job and index, another for another', () => {
    expect(importedProductId(jobId, 3)).toBe(importedProductId(jobId, 3));
    expect(importedProductId(jobId, 3)).toMatch(uuidPattern);
    const ids = new Set([
      importedProductId(jobId, 0),
      importedProductId(jobId, 1),
      importedProductId(jobId, 10),
      importedProductId(otherJob, 0),
      itemCommandId(jobId, 0),
    ]);
    expect(ids.size).toBe(5);
  });
});

describe('planning an import item', () => {
  it('makes a valid item a CreateProduct of its deterministic product, idempotent under job and index', () => {
    const plan = planItem('BULK_IMPORT', jobId, 7, {
      title: '  Lamp ',
      description: 'Bright',
      category: 'home',
      sku: 'L-1',
      brand: 'Acme',
    });
    const id = importedProductId(jobId, 7);
    expect(plan).toEqual({
      kind: 'command',
      index: 7,
      productId: id,
      command: {
        type: 'CreateProduct',
        data: { productId: id, title: 'Lamp', description: 'Bright', category: 'home', sku: 'L-1', brand: 'Acme' },
      },
      idempotency: { key: `bulk:${jobId}:7`, requestHash: jobId },
    });
  });

  it('fills description and category with null and leaves out sku and brand not given', () => {
    const plan = planItem('BULK_IMPORT', jobId, 0, { title: 'Mug' });
    const id = importedProductId(jobId, 0);
    expect(plan).toMatchObject({ kind: 'command', productId: id });
    if (plan.kind !== 'command') return;
    expect(plan.command).toEqual({ type: 'CreateProduct', data: { productId: id, title: 'Mug', description: null, category: null } });
    expect(plan.idempotency.key).toBe(`bulk:${jobId}:0`);
  });

  it('plans the same item of the same job the same way every time', () => {
    const item = { title: 'Mug', sku: 'M' };
    expect(planItem('BULK_IMPORT', jobId, 2, item)).toEqual(planItem('BULK_IMPORT', jobId, 2, item));
    expect(planItem('BULK_IMPORT', otherJob, 2, item)).not.toEqual(planItem('BULK_IMPORT', jobId, 2, item));
  });

  it('fails an item without a title as MISSING_TITLE', () => {
    for (const item of [{}, { description: 'no title' }, { title: undefined, sku: 'X' }]) {
      const failure = failureOf(planItem('BULK_IMPORT', jobId, 4, item));
      expect(failure).toMatchObject({ index: 4, code: 'MISSING_TITLE', productId: null });
      expect(failure.message).toContain('title');
    }
  });

  it('fails an unknown field, a title too long or empty, or a field of the wrong type as INVALID_FIELD', () => {
    const cases: [unknown, string][] = [
      [{ title: 'Mug', colour: 'red' }, 'colour'],
      [{ title: 'Mug', template_id: productId }, 'template_id'],
      [{ title: 'x'.repeat(501) }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 42 }, 'title'],
      [{ title: 'Mug', sku: 'x'.repeat(101) }, 'sku'],
      [{ title: 'Mug', brand: '' }, 'brand'],
      [{ title: 'Mug', category: 'c'.repeat(201) }, 'category'],
    ];
    for (const [item, field] of cases) {
      const failure = failureOf(planItem('BULK_IMPORT', jobId, 9, item));
      expect(failure, JSON.stringify(item)).toMatchObject({ index: 9, code: 'INVALID_FIELD', productId: null });
      expect(failure.message, JSON.stringify(item)).toContain(field);
      expect(failure.message.length).toBeLessThanOrEqual(500);
    }
    // the longest title taken
    expect(planItem('BULK_IMPORT', jobId, 9, { title: 'x'.repeat(500) }).kind).toBe('command');
  });
});

describe('planning an update item', () => {
  it('makes a valid item an UpdateProduct of only the fields it gives', () => {
    expect(planItem('BULK_UPDATE', jobId, 1, { id: productId, title: ' New ' })).toEqual({
      kind: 'command',
      index: 1,
      productId,
      command: { type: 'UpdateProduct', data: { productId, title: 'New' } },
      idempotency: { key: `bulk:${jobId}:1`, requestHash: jobId },
    });
    const plan = planItem('BULK_UPDATE', jobId, 2, { id: productId, sku: null, category: null, brand: 'Acme' });
    expect(plan).toMatchObject({ command: { type: 'UpdateProduct', data: { productId, sku: null, category: null, brand: 'Acme' } } });
    if (plan.kind === 'command') expect(Object.keys(plan.command.data).sort()).toEqual(['brand', 'category', 'productId', 'sku']);
  });

  it('takes a status ACTIVE or DRAFT on an update only', () => {
    const plan = planItem('BULK_UPDATE', jobId, 4, { id: productId, status: 'DRAFT' });
    expect(plan).toMatchObject({ kind: 'command', command: { type: 'UpdateProduct', data: { productId, status: 'DRAFT' } } });
    expect(failureOf(planItem('BULK_UPDATE', jobId, 4, { id: productId, status: 'ARCHIVED' }))).toMatchObject({ code: 'INVALID_FIELD' });
    expect(failureOf(planItem('BULK_IMPORT', jobId, 4, { title: 'Mug', status: 'DRAFT' }))).toMatchObject({ code: 'INVALID_FIELD' });
  });

  it('lower-cases an upper-case product id', () => {
    const plan = planItem('BULK_UPDATE', jobId, 0, { id: productId.toUpperCase(), title: 'T' });
    expect(plan).toMatchObject({ kind: 'command', productId, command: { data: { productId, title: 'T' } } });
  });

  it('fails an id that is no UUID, or a field it does not take, as INVALID_FIELD naming the product when it can', () => {
    expect(failureOf(planItem('BULK_UPDATE', jobId, 3, { id: 'nope', title: 'T' }))).toMatchObject({
      index: 3,
      code: 'INVALID_FIELD',
      productId: null,
    });
    expect(failureOf(planItem('BULK_UPDATE', jobId, 3, { id: 12, title: 'T' }))).toMatchObject({ code: 'INVALID_FIELD', productId: null });
    expect(failureOf(planItem('BULK_UPDATE', jobId, 3, { title: 'T' }))).toMatchObject({ code: 'INVALID_FIELD', productId: null });
    for (const item of [
      { id: productId, colour: 'red' },
      { id: productId, title: '' },
      { id: productId.toUpperCase(), title: 'x'.repeat(501) },
    ]) {
      expect(failureOf(planItem('BULK_UPDATE', jobId, 5, item)), JSON.stringify(item)).toMatchObject({
        index: 5,
        code: 'INVALID_FIELD',
        productId,
      });
    }
  });
});

describe('planning a delete item', () => {
  it('makes an item a DeleteProduct of its lower-cased id', () => {
    expect(planItem('BULK_DELETE', jobId, 6, { id: productId })).toEqual({
      kind: 'command',
      index: 6,
      productId,
      command: { type: 'DeleteProduct', data: { productId } },
      idempotency: { key: `bulk:${jobId}:6`, requestHash: jobId },
    });
    expect(planItem('BULK_DELETE', jobId, 6, { id: productId.toUpperCase() })).toMatchObject({
      productId,
      command: { data: { productId } },
    });
  });

  it('fails an id that is no UUID as INVALID_FIELD', () => {
    expect(failureOf(planItem('BULK_DELETE', jobId, 8, { id: 'abc' }))).toMatchObject({ index: 8, code: 'INVALID_FIELD', productId: null });
  });
});

describe('a refused product command', () => {
  const error = (kind: SerializedDomainError['kind'], details: SerializedDomainError['details'] = []): SerializedDomainError => ({
    kind,
    message: `refused as ${kind}`,
    details,
  });

  it('is the item failure its kind names', () => {
    expect(refusedItem(2, productId, error('not_found'))).toEqual({
      index: 2,
      code: 'PRODUCT_NOT_FOUND',
      message: 'refused as not_found',
      productId,
    });
    expect(refusedItem(2, productId, error('validation')).code).toBe('INVALID_FIELD');
    expect(refusedItem(2, productId, error('conflict')).code).toBe('CONFLICT');
    expect(refusedItem(2, productId, error('internal')).code).toBe('REJECTED');
  });

  it('says the details, within 500 characters', () => {
    const failure = refusedItem(0, productId, error('validation', [{ path: 'data.title', message: 'too long' }]));
    expect(failure.message).toBe('refused as validation; data.title too long');
    const long = refusedItem(0, productId, { kind: 'conflict', message: 'y'.repeat(2_000), details: [] });
    expect(long.message).toHaveLength(500);
  });
});
