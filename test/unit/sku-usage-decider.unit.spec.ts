import { describe, expect, it } from 'vitest';
import { skuUsageDecider, skuUsageIdOf, type SkuUsageEvent } from '../../commands/quality/sku-usage.ts';
import { issueIdOf, qualityNamespaceOf } from '../../commands/quality/validation-issue.ts';
import { metadata } from '../support/command-metadata.ts';
import { DeciderSpecification } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(skuUsageDecider);

const namespace = qualityNamespaceOf(metadata.tenantId, metadata.orgId);
const skuUsageId = skuUsageIdOf(metadata.tenantId, metadata.orgId, 'SKU-1');
const duplicateOf = (productId: string) => issueIdOf(namespace, 'DUPLICATE_SKU', `${productId}/SKU-1`);

/** Feeds counts one by one, as the SKU router does. */
const run = (counts: [productId: string, uses: number][]) =>
  given().whenInTurn(counts.map(([productId, uses]) => ({ type: 'CountSkuUses', data: { skuUsageId, sku: 'SKU-1', productId, uses } })));
const raised = (events: SkuUsageEvent[] = []) => events.flatMap((e) => (e.type === 'ValidationIssueRaised' ? [e.data] : []));
const resolved = (events: SkuUsageEvent[] = []) => events.flatMap((e) => (e.type === 'ValidationIssueResolved' ? [e.data.issueId] : []));

describe('sku-usage decider', () => {
  it('flags a duplicate SKU on both products, with the ids the product issues use', () => {
    const { events, state } = run([
      ['a', 1],
      ['b', 1],
    ]);
    expect(events[0]).toEqual([{ type: 'SkuUsesCounted', data: { qualityId: skuUsageId, sku: 'SKU-1', productId: 'a', uses: 1 } }]);
    expect(raised(events[1])).toEqual([
      {
        qualityId: skuUsageId,
        issueId: duplicateOf('a'),
        productId: 'a',
        issueType: 'DUPLICATE_SKU',
        severity: 'ERROR',
        message: 'SKU "SKU-1" is also used by product b.',
      },
      {
        qualityId: skuUsageId,
        issueId: duplicateOf('b'),
        productId: 'b',
        issueType: 'DUPLICATE_SKU',
        severity: 'ERROR',
        message: 'SKU "SKU-1" is also used by product a.',
      },
    ]);
    expect(Object.keys(state.open).sort()).toEqual([duplicateOf('a'), duplicateOf('b')].sort());
  });

  it('resolves the pair once one product lets the SKU go, and says nothing for a count that did not change', () => {
    const { events, state } = run([
      ['a', 1],
      ['b', 1],
      ['b', 1],
      ['b', 0],
    ]);
    expect(events[2]).toEqual([]);
    expect(resolved(events[3]).sort()).toEqual([duplicateOf('a'), duplicateOf('b')].sort());
    expect(state).toEqual({ uses: { a: 1 }, open: {} });
  });

  it('flags one product using the SKU twice, and rewrites the message when a third product joins', () => {
    const { events } = run([
      ['a', 2],
      ['c', 1],
    ]);
    expect(raised(events[0]).map((r) => r.message)).toEqual(['SKU "SKU-1" is used more than once in this product.']);
    expect(raised(events[1]).map((r) => `${r.productId}: ${r.message}`)).toEqual([
      'a: SKU "SKU-1" is also used by product c.',
      'c: SKU "SKU-1" is also used by product a.',
    ]);
  });

  it('converges on the same state for the same counts', () => {
    const counts: [string, number][] = [
      ['a', 1],
      ['b', 2],
      ['a', 0],
      ['c', 1],
      ['b', 0],
    ];
    expect(run(counts).state).toEqual(run(counts).state);
    expect(run(counts).state).toEqual({ uses: { c: 1 }, open: {} });
  });
});
