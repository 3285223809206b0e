import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CatalogFeedSettings } from '../../commands/ucp/feed-settings.ts';
import { minorUnits } from '../../commands/ucp/acp-product.ts';
import { FeedWriter, feedKeys } from '../../commands/ucp/feed-document.ts';
import { gtinOf, isListed, productGtins, type FeedProduct, type FeedVariant } from '../../commands/ucp/feed-product.ts';
import { acpProductProblems } from '../support/acp-feed-schema.ts';
import { feedSettings, SELLER_LINKS, SELLER_PAGES } from '../support/feed-settings.ts';

const basic = feedSettings();
const full = feedSettings({
  ...SELLER_PAGES,
  storeCountry: 'DE',
  targetCountries: ['AT', 'DE'],
  returnWindowDays: 30,
  itemCondition: 'new',
  shippingPrice: '4.95',
  shippingCurrency: 'EUR',
});

const variant = (overrides: Partial<FeedVariant> = {}): FeedVariant => ({
  id: 'v-1',
  sku: 'TENT-2P-GRN',
  barcode: '4006381333931', // a valid EAN-13
  price: '249.90',
  currency: 'EUR',
  available: 3,
  ...overrides,
});

const image = (url: string, variantId: string | null = null, altText: string | null = null) => ({ url, altText, variantId });

const product = (overrides: Partial<FeedProduct> = {}): FeedProduct => ({
  id: 'p-1',
  title: 'Two-person tent',
  description: 'Light and quick to pitch.',
  sku: 'TENT-2P',
  brand: 'Acme',
  category: 'Camping > Tents',
  status: 'ACTIVE',
  hasOpenError: false,
  media: [image('https://cdn.example.com/tent-front.jpg', null, 'The tent from the front'), image('https://cdn.example.com/tent-side.jpg')],
  variants: [variant()],
  ...overrides,
});

const twoVariants = (overrides: Partial<FeedProduct> = {}) =>
  product({
    variants: [
      variant(),
      variant({ id: 'v-2', sku: 'TENT-2P-RED', barcode: '96385074', price: '1000000.10', currency: 'EUR', available: 0 }),
    ],
    media: [
      image('https://cdn.example.com/tent-front.jpg'),
      image('https://cdn.example.com/tent-red.jpg', 'v-2'),
      image('https://cdn.example.com/tent-side.jpg'),
    ],
    ...overrides,
  });

/** Both files whole, as the writer hands them out (the feed worker compresses them as they come instead). */
const built = (products: FeedProduct[], settings: CatalogFeedSettings | null = basic) => {
  const jsonLd: Buffer[] = [];
  const jsonl: Buffer[] = [];
  const writer = new FeedWriter(settings, { jsonLd: (bytes) => jsonLd.push(bytes), jsonl: (bytes) => jsonl.push(bytes) });
  for (const p of products) writer.add(p);
  const feed = { ...writer.finish(), jsonLd: Buffer.concat(jsonLd), jsonl: Buffer.concat(jsonl) };
  return {
    feed,
    jsonLd: JSON.parse(feed.jsonLd.toString('utf8')) as Record<string, any>,
    lines: feed.jsonl
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, any>),
  };
};
const itemOf = (p: FeedProduct, settings: CatalogFeedSettings | null = basic) => built([p], settings).jsonLd.itemListElement[0].item;

const SELLER = {
  '@type': 'Organization',
  name: 'Acme Outdoor',
  url: 'https://shop.example.com/',
  address: { '@type': 'PostalAddress', addressCountry: 'DE' },
};
const SHIPPING = {
  '@type': 'OfferShippingDetails',
  shippingRate: { '@type': 'MonetaryAmount', value: '4.95', currency: 'EUR' },
  shippingDestination: [
    { '@type': 'DefinedRegion', addressCountry: 'AT' },
    { '@type': 'DefinedRegion', addressCountry: 'DE' },
  ],
};
const RETURNS = {
  '@type': 'MerchantReturnPolicy',
  applicableCountry: ['AT', 'DE'],
  returnPolicyCategory: 'https://schema.org/MerchantReturnFiniteReturnWindow',
  merchantReturnDays: 30,
  merchantReturnLink: 'https://shop.example.com/returns',
};

/** What the tent says of itself, as a Product and as a ProductGroup alike. */
const TENT = {
  productID: 'p-1',
  name: 'Two-person tent',
  description: 'Light and quick to pitch.',
  brand: { '@type': 'Brand', name: 'Acme' },
  category: 'Camping > Tents',
  image: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
  url: 'https://shop.example.com/products/TENT-2P',
};

/** What every offer of the tent says beyond its price and stock, with the full settings. */
const OFFER_TERMS = {
  itemCondition: 'https://schema.org/NewCondition',
  url: 'https://shop.example.com/products/TENT-2P',
  seller: SELLER,
  shippingDetails: SHIPPING,
  hasMerchantReturnPolicy: RETURNS,
};

describe('catalog feed JSON-LD', () => {
  it('is an ItemList; a product with one offered variant is a Product with its Offer, condition, seller, shipping and returns', () => {
    const { jsonLd, feed } = built([product()], full);
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
          ...TENT,
          sku: 'TENT-2P',
          gtin13: '4006381333931',
          offers: [
            {
              '@type': 'Offer',
              sku: 'TENT-2P-GRN',
              gtin13: '4006381333931',
              price: '249.90',
              priceCurrency: 'EUR',
              availability: 'https://schema.org/InStock',
              ...OFFER_TERMS,
            },
          ],
        },
      },
    ]);
    expect(jsonLd.itemListElement[0].item).not.toHaveProperty('mpn');
  });

  it('is a ProductGroup with a Product per offered variant (hasVariant), named apart by SKU, each with its own image', () => {
    const item = itemOf(twoVariants(), full);
    expect(item).toEqual({
      '@type': 'ProductGroup',
      ...TENT,
      productGroupID: 'TENT-2P',
      hasVariant: [
        {
          '@type': 'Product',
          productID: 'v-1',
          name: 'Two-person tent (TENT-2P-GRN)',
          sku: 'TENT-2P-GRN',
          gtin13: '4006381333931',
          image: ['https://cdn.example.com/tent-front.jpg', 'https://cdn.example.com/tent-side.jpg'],
          offers: { '@type': 'Offer', price: '249.90', priceCurrency: 'EUR', availability: 'https://schema.org/InStock', ...OFFER_TERMS },
        },
        expect.objectContaining({
          '@type': 'Product',
          productID: 'v-2',
          name: 'Two-person tent (TENT-2P-RED)',
          gtin8: '96385074',
          image: ['https://cdn.example.com/tent-red.jpg'],
          offers: expect.objectContaining({ price: '1000000.10', availability: 'https://schema.org/OutOfStock' }),
        }),
      ],
    });
    // Nothing a variant records says what it varies by (size, colour, …).
    expect(item).not.toHaveProperty('variesBy');
  });

  it('groups by the product id when the product has no SKU, and only variants on offer', () => {
    const item = itemOf(twoVariants({ sku: null, variants: [...twoVariants().variants, variant({ id: 'v-3', price: null })] }));
    expect(item.productGroupID).toBe('p-1');
    expect(item.hasVariant.map((v: any) => v.productID)).toEqual(['v-1', 'v-2']);
    const single = itemOf(product({ variants: [variant(), variant({ id: 'v-2', currency: null })] }));
    expect(single['@type']).toBe('Product');
    expect(single.offers).toHaveLength(1);
  });

  it('states no return window it was not given, and a refusal of returns as such', () => {
    const offerWith = (settings: CatalogFeedSettings) => itemOf(product(), settings).offers[0];
    expect(offerWith({ ...full, returnWindowDays: 0 }).hasMerchantReturnPolicy).toEqual({
      '@type': 'MerchantReturnPolicy',
      applicableCountry: ['AT', 'DE'],
      returnPolicyCategory: 'https://schema.org/MerchantReturnNotPermitted',
      merchantReturnLink: 'https://shop.example.com/returns',
    });
    expect(offerWith({ ...full, returnWindowDays: null }).hasMerchantReturnPolicy).toEqual({
      '@type': 'MerchantReturnPolicy',
      applicableCountry: ['AT', 'DE'],
      merchantReturnLink: 'https://shop.example.com/returns',
    });
    const bare = offerWith({ ...full, returnWindowDays: null, returnPolicyUrl: null, shippingPrice: null, shippingCurrency: null });
    expect(bare).not.toHaveProperty('hasMerchantReturnPolicy');
    expect(bare).not.toHaveProperty('shippingDetails');
    expect(offerWith({ ...full, itemCondition: 'used' }).itemCondition).toBe('https://schema.org/UsedCondition');
  });

  it('keeps the price exactly as stored (a string, trailing zeros and all)', () => {
    const { feed } = built([twoVariants({ variants: [variant({ price: '0.10' }), variant({ id: 'v-2', price: '999999999999.999999' })] })]);
    const text = feed.jsonLd.toString('utf8');
    expect(text).toContain('"price":"0.10"');
    expect(text).toContain('"price":"999999999999.999999"');
  });

  it('leaves out products that are DRAFT or have an open ERROR issue', () => {
    const { jsonLd, lines } = built([
      product({ id: 'p-draft', status: 'DRAFT' }),
      product({ id: 'p-error', hasOpenError: true }),
      product({ id: 'p-ok' }),
    ]);
    expect(jsonLd.itemListElement.map((e: any) => e.item.productID)).toEqual(['p-ok']);
    expect(jsonLd.itemListElement[0].position).toBe(1);
    expect(lines.map((l) => l.id)).toEqual(['p-ok']);
    expect(isListed(product({ status: 'DRAFT' }))).toBe(false);
    expect(isListed(product({ hasOpenError: true }))).toBe(false);
  });

  it('offers only variants with a price and a currency, and omits what a product does not have', () => {
    const item = itemOf(
      product({
        description: null,
        sku: null,
        brand: null,
        category: null,
        media: [],
        variants: [
          variant({ sku: null, barcode: null }),
          variant({ id: 'v-2', sku: null, barcode: null, price: null }),
          variant({ id: 'v-3', sku: null, barcode: null, currency: null }),
        ],
      }),
    );
    expect(Object.keys(item).sort()).toEqual(['@type', 'name', 'offers', 'productID']);
    expect(item.offers).toHaveLength(1);
    expect(item.offers[0]).not.toHaveProperty('sku');
    expect(item.offers[0]).not.toHaveProperty('url');
    expect(item.offers[0]).not.toHaveProperty('itemCondition');
  });

  it('names no seller, URL or condition before the feed is configured', () => {
    const item = itemOf(product(), null);
    expect(item).not.toHaveProperty('url');
    expect(item.offers[0]).not.toHaveProperty('seller');
    expect(item.offers[0]).not.toHaveProperty('itemCondition');
  });

  it('builds the URL from the template, the SKU falling back to the first variant with one', () => {
    const byId = { ...basic, productUrlTemplate: 'https://s.example/p/{id}?sku={sku}' };
    expect(itemOf(product(), byId).url).toBe('https://s.example/p/p-1?sku=TENT-2P');
    const noSku = product({ sku: null, variants: [variant({ sku: null }), variant({ id: 'v-2', sku: 'A B', price: null })] });
    expect(itemOf(noSku).url).toBe('https://shop.example.com/products/A%20B');
    const none = product({ sku: null, variants: [variant({ sku: null })] });
    expect(itemOf(none)).not.toHaveProperty('url');
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

describe('ACP products.jsonl', () => {
  it('has a Product line per listed product with an offered variant, each valid against the ACP feed schema', () => {
    const products = [
      product(),
      twoVariants({ id: 'p-2' }),
      product({
        id: 'p-3',
        description: null,
        sku: null,
        brand: null,
        category: null,
        media: [],
        variants: [variant({ sku: null, barcode: null })],
      }),
      product({ id: 'p-4', variants: [variant({ price: null })] }), // nothing on offer: no line
      product({
        id: 'p-5',
        media: [image('https://cdn.example.com/a tent.jpg')],
        variants: [variant({ currency: 'JPY', price: '1500.00' })],
      }),
    ];
    for (const settings of [null, basic, full]) {
      const { lines, feed } = built(products, settings);
      expect(lines.map((line) => line.id)).toEqual(['p-1', 'p-2', 'p-3', 'p-5']);
      expect(feed.itemCount).toBe(5);
      for (const line of lines) expect(acpProductProblems(line), JSON.stringify(line)).toEqual([]);
    }
  });

  it("carries the product, its variants' prices in minor units, stock, barcode, category, condition and the seller's links", () => {
    const [line] = built([twoVariants()], full).lines;
    const seller = { name: 'Acme Outdoor', links: SELLER_LINKS };
    expect(line).toEqual({
      id: 'p-1',
      title: 'Two-person tent',
      description: { plain: 'Light and quick to pitch.' },
      url: 'https://shop.example.com/products/TENT-2P',
      media: [
        { type: 'image', url: 'https://cdn.example.com/tent-front.jpg' },
        { type: 'image', url: 'https://cdn.example.com/tent-side.jpg' },
      ],
      variants: [
        {
          id: 'v-1',
          title: 'Two-person tent (TENT-2P-GRN)',
          url: 'https://shop.example.com/products/TENT-2P',
          barcodes: [{ type: 'GTIN', value: '4006381333931' }],
          price: { amount: 24990, currency: 'EUR' },
          availability: { available: true, status: 'in_stock' },
          categories: [{ value: 'Camping > Tents', taxonomy: 'merchant' }],
          condition: ['new'],
          seller,
        },
        {
          id: 'v-2',
          title: 'Two-person tent (TENT-2P-RED)',
          url: 'https://shop.example.com/products/TENT-2P',
          barcodes: [{ type: 'GTIN', value: '96385074' }],
          price: { amount: 100000010, currency: 'EUR' },
          availability: { available: false, status: 'out_of_stock' },
          categories: [{ value: 'Camping > Tents', taxonomy: 'merchant' }],
          condition: ['new'],
          media: [{ type: 'image', url: 'https://cdn.example.com/tent-red.jpg' }],
          seller,
        },
      ],
    });
    expect(built([product()], full).lines[0]?.media[0]).toEqual({
      type: 'image',
      url: 'https://cdn.example.com/tent-front.jpg',
      alt_text: 'The tent from the front',
    });
  });

  it('names no seller and no URL before the feed is configured', () => {
    const line = built([product()], null).lines[0];
    expect(line).not.toHaveProperty('url');
    expect(line?.variants[0]).not.toHaveProperty('seller');
    expect(line?.variants[0]).not.toHaveProperty('condition');
  });

  it("puts prices in the currency's minor units, rounding a finer price half up", () => {
    expect(minorUnits('249.90', 'EUR')).toBe(24990);
    expect(minorUnits('1500.00', 'JPY')).toBe(1500);
    expect(minorUnits('1.234', 'KWD')).toBe(1234);
    // Asked again (the digits are kept per code), and for codes ICU does not know: 2 digits.
    expect(minorUnits('1500.00', 'JPY')).toBe(1500);
    expect(minorUnits('1.234', 'KWD')).toBe(1234);
    for (const code of ['XQQ', 'XQQ', 'not-a-code']) expect(minorUnits('1.50', code)).toBe(150);
    expect(minorUnits('19.995', 'USD')).toBe(2000);
    expect(minorUnits('19.994999', 'USD')).toBe(1999);
    expect(minorUnits('999999999999.999999', 'EUR')).toBe(100000000000000);
  });
});

describe('feed files', () => {
  it('are the same bytes, hash and keys for the same products', () => {
    const a = built([product(), product({ id: 'p-2' })]).feed;
    const b = built([product(), product({ id: 'p-2' })]).feed;
    expect(a.jsonLd.equals(b.jsonLd)).toBe(true);
    expect(a.jsonl.equals(b.jsonl)).toBe(true);
    expect(a.contentHash).toBe(b.contentHash);
    expect(a.jsonLdHash).toBe(createHash('sha256').update(a.jsonLd).digest('hex'));
    expect(feedKeys('t', 'o', a)).toEqual({ jsonLdKey: `feeds/t/o/${a.jsonLdHash}.jsonld`, jsonlKey: `feeds/t/o/${a.jsonlHash}.jsonl` });
  });

  it('change hash when anything the feed shows changes (in or out of stock, settings)', () => {
    const base = built([product()]).feed.contentHash;
    expect(built([product({ variants: [variant({ available: 0 })] })]).feed.contentHash).not.toBe(base);
    expect(built([product()], { ...basic, sellerName: 'Other' }).feed.contentHash).not.toBe(base);
    expect(built([product()], { ...basic, returnPolicyUrl: 'https://shop.example.com/returns' }).feed.contentHash).not.toBe(base);
    // Both files tell only in or out of stock: a count that stays above zero shows nothing new.
    expect(built([product({ variants: [variant({ available: 7 })] })]).feed.contentHash).toBe(base);
  });

  it('is an empty list and no lines for a catalog with nothing to offer', () => {
    const { jsonLd, lines, feed } = built([product({ status: 'DRAFT' })]);
    expect(jsonLd).toMatchObject({ '@type': 'ItemList', itemListElement: [], numberOfItems: 0 });
    expect(lines).toEqual([]);
    expect(feed.jsonl.length).toBe(0);
    expect(feed.productCount).toBe(0);
  });
});
