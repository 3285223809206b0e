import { createHash } from 'node:crypto';
import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Knex } from 'knex';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import type { Scope } from '../../projections/catalog/catalog-queries.ts';
import { validationProjection } from '../../projections/validation/validation-projection.ts';
import { blockedProducts } from '../../projections/validation/validation-queries.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';

export const EXPORT_SCHEMA_VERSION = 1;
const PAGE = 1_000;
const catalog = liveSchema(catalogProjection);
const validation = liveSchema(validationProjection);

export type ExportFile = { key: string; lines: number; bytes: number; sha256: string };
export type SnapshotPosition = Record<string, Record<string, Record<string, string>>>;
export type CatalogSnapshot = {
  products: ExportFile;
  taxonomy: ExportFile;
  manifest: { key: string; bytes: number };
  productCount: number;
  draftCount: number;
  excludedCount: number;
  position: SnapshotPosition;
};

export const exportKeys = (scope: Scope, exportId: string) => {
  const base = `exports/${scope.tenantId}/${scope.orgId}/${exportId}`;
  return { products: `${base}/products.jsonl.gz`, taxonomy: `${base}/taxonomy.jsonl.gz`, manifest: `${base}/manifest.json` };
};

/** Counts and hashes what passes through: the stored (compressed) bytes, as a downloader will check them. */
class Tally extends Transform {
  bytes = 0;
  private readonly hash = createHash('sha256');
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** Writes lines to `key` as gzip-compressed JSON lines, streaming: memory stays at one page whatever the catalog's size. */
async function writeLines(store: ObjectStore, key: string, lines: AsyncIterable<string>): Promise<ExportFile> {
  const gzip = createGzip();
  const tally = new Tally();
  const body = new PassThrough();
  let count = 0;
  const stored = store.put(key, body, { contentType: 'application/gzip' });
  // A store that gives up stops reading: end the pipeline too rather than leave it waiting on a full buffer. The error
  // reaches the caller through `stored`; the listener keeps a pipeline that already finished from seeing it unhandled.
  body.on('error', () => undefined);
  stored.catch((error: unknown) => body.destroy(error instanceof Error ? error : new Error(String(error))));
  const written = pipeline(
    async function* () {
      for await (const line of lines) {
        count++;
        yield `${line}\n`;
      }
    },
    gzip,
    tally,
    body,
  );
  await Promise.all([stored, written]);
  return { key, lines: count, bytes: tally.bytes, sha256: tally.digest() };
}

/** One product a line, with its variants, media and attribute values; products with an open ERROR issue are left out. */
async function* productLines(tx: Knex.Transaction, scope: Scope, tally: { drafts: number; excluded: string[] }): AsyncIterable<string> {
  const blocked = await blockedProducts(tx, scope);
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = (await tx.raw(
      `select p.id, p.status,
         json_build_object(
           'id', p.id, 'title', p.title, 'description', p.description, 'status', p.status, 'draft', p.status = 'DRAFT',
           'sku', p.sku, 'brand', p.brand, 'category', p.category, 'template_id', p.template_id,
           'quality_score', p.quality_score, 'attributes', p.attributes,
           'created_at', p.created_at, 'updated_at', p.updated_at,
           'variants', coalesce((select json_agg(json_build_object('id', v.id, 'sku', v.sku, 'barcode', v.barcode,
                                   'price', v.price, 'currency', v.currency, 'created_at', v.created_at) order by v.created_at, v.id)
                                 from ${catalog}.variants v where v.product_id = p.id), '[]'::json),
           'media', coalesce((select json_agg(json_build_object('id', m.id, 'variant_id', m.variant_id, 'url', m.url,
                                'alt_text', m.alt_text, 'sort_order', m.sort_order) order by m.sort_order, m.created_at, m.id)
                              from ${catalog}.media m where m.product_id = p.id), '[]'::json)
         )::text as line
       from ${catalog}.products p
       where p.tenant_id = ? and p.org_id = ? and p.id > ?
       order by p.id
       limit ${PAGE}`,
      [scope.tenantId, scope.orgId, after],
    )) as { rows: { id: string; status: string; line: string }[] };
    for (const row of rows) {
      if (blocked.has(row.id)) {
        tally.excluded.push(row.id);
        continue;
      }
      if (row.status === 'DRAFT') tally.drafts++;
      yield row.line;
    }
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}

const taxonomyTables: [kind: string, table: string][] = [
  ['category', 'categories'],
  ['brand', 'brands'],
  ['attribute', 'attributes'],
  ['attribute_group', 'attribute_groups'],
  ['template', 'templates'],
];

/** Categories, brands, attributes, attribute groups and templates, one a line, each tagged with its kind. */
async function* taxonomyLines(tx: Knex.Transaction, scope: Scope): AsyncIterable<string> {
  for (const [kind, table] of taxonomyTables) {
    const { rows } = (await tx.raw(
      `select (jsonb_build_object('kind', ?::text) || (to_jsonb(t) - 'tenant_id' - 'org_id'))::text as line
       from ${catalog}.${table} t where t.tenant_id = ? and t.org_id = ? order by t.created_at, t.id`,
      [kind, scope.tenantId, scope.orgId],
    )) as { rows: { line: string }[] };
    for (const row of rows) yield row.line;
  }
}

async function positionOf(tx: Knex.Transaction): Promise<SnapshotPosition> {
  const position: SnapshotPosition = {};
  for (const [name, schema] of [
    [catalogProjection.name, catalog],
    [validationProjection.name, validation],
  ] as const) {
    const { rows } = (await tx.raw(
      `select topic, partition, "offset"::text as "offset" from ${schema}.checkpoints order by topic, partition`,
    )) as {
      rows: { topic: string; partition: number; offset: string }[];
    };
    const byTopic: Record<string, Record<string, string>> = {};
    for (const { topic, partition, offset } of rows) (byTopic[topic] ??= {})[String(partition)] = offset;
    position[name] = byTopic;
  }
  return position;
}

/**
 * Writes the tenant's catalog as of one point of the log: every read happens in one REPEATABLE READ transaction, so the
 * rows are those the catalog and validation read models held at their checkpoints read in that same transaction (each
 * runner commits rows and checkpoint together), never a mix of before and after a concurrent change. The manifest is
 * written last: an export whose manifest exists is whole.
 */
export async function writeCatalogSnapshot(
  db: Knex,
  store: ObjectStore,
  scope: Scope,
  exportId: string,
  now: () => Date = () => new Date(),
): Promise<CatalogSnapshot> {
  const keys = exportKeys(scope, exportId);
  return db.transaction(
    async (tx) => {
      const position = await positionOf(tx);
      const tally = { drafts: 0, excluded: [] as string[] };
      const products = await writeLines(store, keys.products, productLines(tx, scope, tally));
      const taxonomy = await writeLines(store, keys.taxonomy, taxonomyLines(tx, scope));
      const manifest = {
        schema_version: EXPORT_SCHEMA_VERSION,
        export_id: exportId,
        tenant_id: scope.tenantId,
        org_id: scope.orgId,
        created_at: now().toISOString(),
        position,
        files: [
          { name: 'products', format: 'jsonl', content_encoding: 'gzip', ...products },
          { name: 'taxonomy', format: 'jsonl', content_encoding: 'gzip', ...taxonomy },
        ],
        counts: {
          products: products.lines,
          draft_products: tally.drafts,
          excluded_products: tally.excluded.length,
          taxonomy: taxonomy.lines,
        },
        excluded: { reason: 'open ERROR validation issue', product_ids: tally.excluded },
      };
      const text = JSON.stringify(manifest, null, 2);
      const { bytes } = await store.put(keys.manifest, text, { contentType: 'application/json' });
      return {
        products,
        taxonomy,
        manifest: { key: keys.manifest, bytes },
        productCount: products.lines,
        draftCount: tally.drafts,
        excludedCount: tally.excluded.length,
        position,
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
