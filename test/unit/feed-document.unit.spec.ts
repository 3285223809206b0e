import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  FeedBuilder,
  feedKeys,
  gtinOf,
  isListed,
  productGtins,
  type FeedProduct,
  type FeedVariant,
} from '../../consumers/feed/feed-document.ts';

const settings = { sellerName: 'Acme Outdoor', productUrlTemplate: 'https://shop.example.com/products/{sku}' };

const variant = (overrides: Partial<FeedVariant> = {}): FeedVariant => ({
  id: 'v-1',
  sku: 'TENT-2P-GRN',
  barcode: '4006381333931', // a valid EAN-13
  price: '249.90',
  currency: 'EUR',
  available: 3,
  ...overrides,
});

const product = (overrides: Partial<FeedProduct> = {}): FeedProduct => ({
  id: 'p-1',
  title: 'Two-person tent',
  description: 'Light and quick to pitch.',
  sku: 'TENT-2P',
  brand: 'Acme',
  category: 'Camping > Tents',
  status: 'ACTIVE',
  hasOpenError: false,
  images: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
  variants: [
    variant(),
    variant({ id: 'v-2', sku: 'TENT-2P-RED', barcode: '96385074', price: '1000000.10', currency: 'EUR', available: 0 }),
  ],
  ...overrides,
});

const built = (products: FeedProduct[], feedSettings: typeof settings | null = settings) => {
  const builder = new FeedBuilder(feedSettings);
  for (const p of products) builder.add(p);
  const feed = builder.finish();
  return {
    feed,
    jsonLd: JSON.parse(feed.jsonLd.toString('utf8')) as Record<string, any>,
    lines: feed.jsonl
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
};

describe('catalog feed JSON-LD', () => {
  it('is an ItemList of Products with an Offer per variant', () => {
    const { jsonLd, feed } = built([product()]);
    expect(jsonLd['@context']).toBe('https://schema.org');
    expect(jsonLd['@type']).toBe('ItemList');
    expect(jsonLd.numberOfItems).toBe(1);
    expect(feed.productCount).toBe(1);
    expect(jsonLd.itemListElement).toEqual([
      {
        '@type': 'ListItem',
        position: 1,
        item: {
          '@type': 'Product',
          productID: 'p-1',
          name: 'Two-person tent',
          description: 'Light and quick to pitch.',
          sku: 'TENT-2P',
          gtin13: '4006381333931',
          gtin8: '96385074',
          brand: { '@type': 'Brand', name: 'Acme' },
          category: 'Camping > Tents',
          image: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
          url: 'https://shop.example.com/products/TENT-2P',
          offers: [
            {
              '@type': 'Offer',
              sku: 'TENT-2P-GRN',
              gtin13: '4006381333931',
              price: '249.90',
              priceCurrency: 'EUR',
              availability: 'https://schema.org/InStock',
              url: 'https://shop.example.com/products/TENT-2P',
              seller: { '@type': 'Organization', name: 'Acme Outdoor' },
            },
            {
              '@type': 'Offer',
              sku: 'TENT-2P-RED',
              gtin8: '96385074',
              price: '1000000.10',
              priceCurrency: 'EUR',
              availability: 'https://schema.org/OutOfStock',
              url: 'https://shop.example.com/products/TENT-2P',
              seller: { '@type': 'Organization', name: 'Acme Outdoor' },
            },
          ],
        },
      },
    ]);
  });

  it('keeps the price exactly as stored (a string, trailing zeros and all)', () => {
    const { feed } = built([product({ variants: [variant({ price: '0.10' }), variant({ id: 'v-2', price: '12345678901234567.00' })] })]);
    const text = feed.jsonLd.toString('utf8');
    expect(text).toContain('"price":"0.10"');
    expect(text).toContain('"price":"12345678901234567.00"');
  });

  it('leaves out products that are DRAFT or have an open ERROR issue', () => {
    const { jsonLd, lines } = built([
      product({ id: 'p-draft', status: 'DRAFT' }),
      product({ id: 'p-error', hasOpenError: true }),
      product({ id: 'p-ok' }),
    ]);
    expect(jsonLd.itemListElement.map((e: any) => e.item.productID)).toEqual(['p-ok']);
    expect(jsonLd.itemListElement[0].position).toBe(1);
    expect(new Set(lines.map((l) => l.item_group_id))).toEqual(new Set(['p-ok']));
    expect(isListed(product({ status: 'DRAFT' }))).toBe(false);
    expect(isListed(product({ hasOpenError: true }))).toBe(false);
  });

  it('offers only variants with a price and a currency, and omits what a product does not have', () => {
    const { jsonLd } = built([
      product({
        description: null,
        sku: null,
        brand: null,
        category: null,
        images: [],
        variants: [
          variant({ sku: null, barcode: null }),
          variant({ id: 'v-2', sku: null, barcode: null, price: null }),
          variant({ id: 'v-3', sku: null, barcode: null, currency: null }),
        ],
      }),
    ]);
    const item = jsonLd.itemListElement[0].item;
    expect(Object.keys(item).sort()).toEqual(['@type', 'name', 'offers', 'productID']);
    expect(item.offers).toHaveLength(1);
    expect(item.offers[0]).not.toHaveProperty('sku');
    expect(item.offers[0]).not.toHaveProperty('url');
  });

  it('names no seller and no URL before the feed is configured', () => {
    const item = built([product()], null).jsonLd.itemListElement[0].item;
    expect(item).not.toHaveProperty('url');
    expect(item.offers[0]).not.toHaveProperty('seller');
  });

  it('builds the URL from the template, the SKU falling back to the first variant with one', () => {
    const byId = { ...settings, productUrlTemplate: 'https://s.example/p/{id}?sku={sku}' };
    expect(built([product()], byId).jsonLd.itemListElement[0].item.url).toBe('https://s.example/p/p-1?sku=TENT-2P');
    const noSku = product({ sku: null, variants: [variant({ sku: null }), variant({ id: 'v-2', sku: 'A B' })] });
    expect(built([noSku]).jsonLd.itemListElement[0].item.url).toBe('https://shop.example.com/products/A%20B');
    const none = product({ sku: null, variants: [variant({ sku: null })] });
    expect(built([none]).jsonLd.itemListElement[0].item).not.toHaveProperty('url');
  });
});

describe('GTINs', () => {
  it('fills the property of the barcode length, only for a valid GTIN', () => {
    expect(gtinOf('96385074')).toEqual({ gtin8: '96385074' });
    expect(gtinOf('036000291452')).toEqual({ gtin12: '036000291452' });
    expect(gtinOf('4006381333931')).toEqual({ gtin13: '4006381333931' });
    expect(gtinOf('10012345678902')).toEqual({ gtin14: '10012345678902' });
    expect(gtinOf('4006381333932')).toEqual({}); // wrong check digit
    expect(gtinOf('123456789')).toEqual({}); // no GTIN length
    expect(gtinOf('40063813339AB')).toEqual({});
    expect(gtinOf(null)).toEqual({});
  });

  it("gives the product, per length, the first variant's valid barcode", () => {
    const variants = [
      variant({ id: 'a', barcode: '4006381333932' }), // invalid: skipped
      variant({ id: 'b', barcode: '036000291452' }),
      variant({ id: 'c', barcode: '4006381333931' }),
      variant({ id: 'd', barcode: '5901234123457' }), // also a valid EAN-13, but later
    ];
    expect(productGtins(variants)).toEqual({ gtin12: '036000291452', gtin13: '4006381333931' });
  });
});

describe('agentic-commerce product feed (JSON lines)', () => {
  it('has one line per offered variant with the spec fields', () => {
    const { lines, feed } = built([product()]);
    expect(feed.itemCount).toBe(2);
    expect(lines[0]).toEqual({
      item_id: 'v-1',
      item_group_id: 'p-1',
      item_group_title: 'Two-person tent',
      title: 'Two-person tent',
      description: 'Light and quick to pitch.',
      url: 'https://shop.example.com/products/TENT-2P',
      brand: 'Acme',
      product_category: 'Camping > Tents',
      image_url: 'https://cdn.example.com/tent-front.jpg',
      additional_image_urls: 'https://cdn.example.com/tent-side.jpg',
      gtin: '4006381333931',
      mpn: 'TENT-2P-GRN',
      price: '249.90 EUR',
      availability: 'in_stock',
      inventory_quantity: 3,
      seller_name: 'Acme Outdoor',
      is_eligible_search: true,
      is_eligible_checkout: false,
    });
    expect(lines[1]).toMatchObject({ item_id: 'v-2', price: '1000000.10 EUR', availability: 'out_of_stock', inventory_quantity: 0 });
  });

  it('is not eligible for search without a required field (here: an image)', () => {
    expect(built([product({ images: [] })]).lines[0]).toMatchObject({ is_eligible_search: false });
    expect(built([product()], null).lines[0]).toMatchObject({ is_eligible_search: false });
  });
});

describe('feed files', () => {
  it('are the same bytes, hash and keys for the same products', () => {
    const a = built([product(), product({ id: 'p-2' })]).feed;
    const b = built([product(), product({ id: 'p-2' })]).feed;
    expect(a.jsonLd.equals(b.jsonLd)).toBe(true);
    expect(a.contentHash).toBe(b.contentHash);
    expect(a.jsonLdHash).toBe(createHash('sha256').update(a.jsonLd).digest('hex'));
    expect(feedKeys('t', 'o', a)).toEqual({ jsonLdKey: `feeds/t/o/${a.jsonLdHash}.jsonld`, jsonlKey: `feeds/t/o/${a.jsonlHash}.jsonl` });
  });

  it('change hash when anything the feed shows changes (stock, settings)', () => {
    const base = built([product()]).feed.contentHash;
    expect(built([product({ variants: [variant({ available: 0 })] })]).feed.contentHash).not.toBe(base);
    expect(built([product()], { ...settings, sellerName: 'Other' }).feed.contentHash).not.toBe(base);
    expect(built([product({ variants: [variant({ available: 7 })] })]).feed.contentHash).not.toBe(base);
  });

  it('is an empty list for a catalog with nothing to offer', () => {
    const { jsonLd, lines, feed } = built([product({ status: 'DRAFT' })]);
    expect(jsonLd).toMatchObject({ '@type': 'ItemList', itemListElement: [], numberOfItems: 0 });
    expect(lines).toEqual([]);
    expect(feed.productCount).toBe(0);
  });
});
