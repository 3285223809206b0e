import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { Tenant } from './client.ts';

export type ExportRecord = {
  id: string;
  status: 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  requests: number;
  product_count: number | null;
  draft_count: number | null;
  excluded_count: number | null;
  bytes: number | null;
  download_url: string | null;
  taxonomy_url: string | null;
  manifest_url: string | null;
  links_expire_at: string | null;
  error: string | null;
  notices: { channel: 'webhook' | 'email'; delivered: boolean; attempts: number; detail: string | null }[];
};

export type Manifest = {
  schema_version: number;
  export_id: string;
  tenant_id: string;
  org_id: string;
  position: Record<string, Record<string, Record<string, string>>>;
  files: { name: string; key: string; lines: number; bytes: number; sha256: string }[];
  counts: { products: number; draft_products: number; excluded_products: number; taxonomy: number };
  excluded: { product_ids: string[] };
};

export const requestExport = (tenant: Tenant, headers: Record<string, string> = {}) =>
  tenant.request<{ status: string; message: string; export_id: string }>('POST', '/api/v1/pim/export', undefined, headers);

export const listExports = async (tenant: Tenant): Promise<ExportRecord[]> =>
  (await tenant.request<ExportRecord[]>('GET', '/api/v1/pim/exports')).body;

/** Polls the tenant's exports until `id` ends, keeping every status it was seen in. */
export async function exportEnd(tenant: Tenant, id: string, deadlineMs = 120_000): Promise<{ record: ExportRecord; seen: string[] }> {
  const seen: string[] = [];
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const record = (await listExports(tenant)).find((e) => e.id === id);
    if (record && seen.at(-1) !== record.status) seen.push(record.status);
    if (record && (record.status === 'COMPLETED' || record.status === 'FAILED')) return { record, seen };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`export ${id} did not end within ${deadlineMs} ms (seen ${seen.join(' → ')})`);
}

const download = async (url: string): Promise<Buffer> => {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return Buffer.from(await response.arrayBuffer());
};

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Downloads a completed export through its links and checks each file against the manifest's checksums. */
export async function downloadExport(record: ExportRecord) {
  const manifest = JSON.parse((await download(record.manifest_url as string)).toString('utf8')) as Manifest;
  const read = async (url: string, name: string) => {
    const bytes = await download(url);
    const file = manifest.files.find((f) => f.name === name);
    if (!file || file.sha256 !== sha256(bytes) || file.bytes !== bytes.length) throw new Error(`${name} does not match the manifest`);
    const text = gunzipSync(bytes).toString('utf8');
    return text === ''
      ? []
      : text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, any>);
  };
  return {
    manifest,
    products: await read(record.download_url as string, 'products'),
    taxonomy: await read(record.taxonomy_url as string, 'taxonomy'),
  };
}
