import { createHash } from 'node:crypto';
import type { CatalogFeedSettings } from './feed-settings.ts';
import { acpProduct } from './acp-product.ts';
import { isListed, offeredVariants, type FeedProduct } from './feed-product.ts';
import { jsonLdItem } from './json-ld-item.ts';

/**
 * The catalog feed's two files, built product by product (docs/decisions.md "Catalog feed"): a schema.org JSON-LD
 * `ItemList` (json-ld-item.ts), and the Agentic Commerce Protocol's products.jsonl, a `Product` per line (acp-product.ts).
 * Pure: the same products and settings give the same bytes, so the same content hash and the same keys.
 */
export type BuiltFeed = {
  jsonLd: Buffer;
  jsonl: Buffer;
  jsonLdHash: string;
  jsonlHash: string;
  /** Over both files: what the feed aggregate compares. */
  contentHash: string;
  productCount: number;
  /** Variants offered: the ACP lines' variants (a line is a product). */
  itemCount: number;
};

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/**
 * Both files, fed products in a stable order (the reader's: by id). The bytes are held until `finish`, because the
 * keys are the contents' hashes and must be known before anything is written.
 */
export class FeedBuilder {
  private readonly jsonLd: Buffer[] = [];
  private readonly jsonl: Buffer[] = [];
  private readonly jsonLdHash = createHash('sha256');
  private readonly jsonlHash = createHash('sha256');
  private productCount = 0;
  private itemCount = 0;

  private readonly settings: CatalogFeedSettings | null;

  constructor(settings: CatalogFeedSettings | null) {
    this.settings = settings;

    const head = { '@context': 'https://schema.org', '@type': 'ItemList', itemListOrder: 'https://schema.org/ItemListUnordered' };
    this.writeJsonLd(`${JSON.stringify(head).slice(0, -1)},"itemListElement":[`);
  }

  add(product: FeedProduct): void {
    if (!isListed(product)) return;
    const item = { '@type': 'ListItem', position: this.productCount + 1, item: jsonLdItem(product, this.settings) };
    this.writeJsonLd(`${this.productCount > 0 ? ',' : ''}${JSON.stringify(item)}`);
    this.productCount += 1;
    const line = acpProduct(product, this.settings);
    if (!line) return;
    const bytes = Buffer.from(`${JSON.stringify(line)}\n`, 'utf8');
    this.jsonl.push(bytes);
    this.jsonlHash.update(bytes);
    this.itemCount += offeredVariants(product).length;
  }

  finish(): BuiltFeed {
    this.writeJsonLd(`],"numberOfItems":${this.productCount}}`);
    const jsonLdHash = this.jsonLdHash.digest('hex');
    const jsonlHash = this.jsonlHash.digest('hex');
    return {
      jsonLd: Buffer.concat(this.jsonLd),
      jsonl: Buffer.concat(this.jsonl),
      jsonLdHash,
      jsonlHash,
      contentHash: sha256(`${jsonLdHash}\n${jsonlHash}`),
      productCount: this.productCount,
      itemCount: this.itemCount,
    };
  }

  private writeJsonLd(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    this.jsonLd.push(bytes);
    this.jsonLdHash.update(bytes);
  }
}

/** The content-addressed keys of a built feed: a file under a key never changes, so it may be cached forever. */
export const feedKeys = (tenantId: string, orgId: string, feed: Pick<BuiltFeed, 'jsonLdHash' | 'jsonlHash'>) => ({
  jsonLdKey: `feeds/${tenantId}/${orgId}/${feed.jsonLdHash}.jsonld`,
  jsonlKey: `feeds/${tenantId}/${orgId}/${feed.jsonlHash}.jsonl`,
});
