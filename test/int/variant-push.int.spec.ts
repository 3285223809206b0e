import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { variantReference, type PlatformVariant } from '../../consumers/integrations/commerce-item.ts';
import { REFERENCE_SLUG } from '../../adapters/provider/provider.ts';
import { UnifiedClient } from '../../adapters/provider/unified-client.ts';
import { pushVariants, removeVariants } from '../../consumers/integrations/variant-push.ts';
import { startUnifiedStandIn, type UnifiedStandIn } from '../../stack/unified/stand-in.ts';
import { unifiedContract } from '../support/unified-contract.ts';

/**
 * A product's variants as itemvariants of its item, against the stand-in over HTTP: made once, updated in place, found
 * again by their references when an answer was lost or the record is stale, and removed when no longer wanted.
 */
const PRODUCT = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const contract = unifiedContract();
let standIn: UnifiedStandIn;
let client: UnifiedClient;

beforeAll(async () => {
  standIn = await startUnifiedStandIn({ contract: contract.check });
  client = new UnifiedClient({ baseUrl: standIn.url, token: standIn.token, timeoutMs: 5_000 });
});
afterAll(async () => {
  await client?.close();
  await standIn?.close();
  expect(contract.violations()).toEqual([]);
});

const wanted = (...skus: string[]): PlatformVariant[] =>
  skus.map((sku) => ({
    variantId: sku.toLowerCase(),
    body: {
      name: sku,
      sku,
      is_active: true,
      metadata: [{ slug: REFERENCE_SLUG, value: variantReference(PRODUCT, sku.toLowerCase()) }],
      prices: [],
    },
  }));

async function itemWithVariants(...skus: string[]) {
  const connection = standIn.createConnection();
  const item = await client.createItem(connection, { name: 'Mug', is_active: true });
  const target = { itemId: item.id, productId: PRODUCT, known: [] as { variantId: string; remoteId: string }[], fresh: true };
  const pushed = await pushVariants(client, connection, target, wanted(...skus));
  return { connection, itemId: item.id, pushed };
}

const skusOn = (connection: string, itemId: string) =>
  standIn
    .variants(connection, itemId)
    .map((v) => v.sku)
    .sort();

describe('variant push', () => {
  it('creates each variant of a fresh item without looking anything up, then updates the same ones in place', async () => {
    const { connection, itemId, pushed } = await itemWithVariants('RED', 'BLUE');
    expect(skusOn(connection, itemId)).toEqual(['BLUE', 'RED']);
    expect(standIn.requests(connection).filter((r) => r.method === 'GET')).toEqual([]);
    standIn.resetLog();
    const again = await pushVariants(
      client,
      connection,
      { itemId, productId: PRODUCT, known: pushed, fresh: false },
      wanted('RED', 'BLUE'),
    );
    expect(again).toEqual(pushed);
    expect(standIn.requests(connection).map((r) => r.method)).toEqual(['PUT', 'PUT']);
  });

  it('finds a variant whose create answer was lost by its reference, instead of making it twice', async () => {
    const { connection, itemId } = await itemWithVariants('RED');
    // The push recorded nothing (its answer was lost): the item's variants are listed and matched.
    const pushed = await pushVariants(
      client,
      connection,
      { itemId, productId: PRODUCT, known: undefined, fresh: false },
      wanted('RED', 'BLUE'),
    );
    expect(skusOn(connection, itemId)).toEqual(['BLUE', 'RED']);
    expect(pushed.map((p) => p.variantId)).toEqual(['red', 'blue']);
  });

  it('makes again a recorded variant removed on the platform, and deletes the ones no longer wanted and copies', async () => {
    const { connection, itemId, pushed } = await itemWithVariants('RED', 'BLUE', 'GREEN');
    const red = pushed.find((p) => p.variantId === 'red')!;
    await client.deleteItemVariant(connection, red.remoteId);
    // A copy of BLUE made by hand on the platform, carrying our reference.
    await client.createItemVariant(connection, { ...wanted('BLUE')[0]!.body, items: [{ id: itemId }] });
    const again = await pushVariants(
      client,
      connection,
      { itemId, productId: PRODUCT, known: pushed, fresh: false },
      wanted('RED', 'BLUE'),
    );
    expect(skusOn(connection, itemId)).toEqual(['BLUE', 'RED']);
    expect(again.find((p) => p.variantId === 'red')?.remoteId).not.toBe(red.remoteId);
    expect(again.find((p) => p.variantId === 'blue')?.remoteId).toBe(pushed.find((p) => p.variantId === 'blue')?.remoteId);
  });

  it('removes the recorded variants, or those the listing shows as ours, and leaves others alone', async () => {
    const { connection, itemId, pushed } = await itemWithVariants('RED', 'BLUE');
    await client.createItemVariant(connection, { name: 'theirs', sku: 'THEIRS', is_active: true, items: [{ id: itemId }] });
    await removeVariants(client, connection, { itemId, productId: PRODUCT, known: pushed });
    expect(skusOn(connection, itemId)).toEqual(['THEIRS']);

    const second = await itemWithVariants('RED');
    await removeVariants(client, second.connection, { itemId: second.itemId, productId: PRODUCT, known: undefined });
    expect(skusOn(second.connection, second.itemId)).toEqual([]);
  });
});
