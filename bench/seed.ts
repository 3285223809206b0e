import { readFileSync } from 'node:fs';
import type { Tenant } from '../test/support/client.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type ImportItem = { title: string; sku: string; description: string; category: string; brand: string };

/** `count` distinct products to import: `<name> <i>`, SKU `<skuPrefix>-<i, 7 digits>`, 50 categories, 20 brands. */
export const importItems = (count: number, name: string, skuPrefix: string, note: string): ImportItem[] =>
  Array.from({ length: count }, (_, i) => ({
    title: `${name} ${i}`,
    sku: `${skuPrefix}-${String(i).padStart(7, '0')}`,
    description: `${name} ${i}, ${note}`,
    category: `category ${i % 50}`,
    brand: `brand ${i % 20}`,
  }));

/** Imports `items` with one BULK_IMPORT job per `perJob` items (the service's BULK_MAX_ITEMS), each polled until COMPLETED. */
export async function bulkImport(tenant: Tenant, items: unknown[], perJob = 100_000): Promise<void> {
  for (let start = 0; start < items.length; start += perJob) {
    const payload = items.slice(start, start + perJob);
    const job = await tenant.request<{ id: string }>('POST', '/api/v1/pim/bulk-jobs', { job_type: 'BULK_IMPORT', payload });
    if (job.status !== 200) throw new Error(`bulk import answered ${job.status}: ${JSON.stringify(job.body)}`);
    for (;;) {
      const r = await tenant.request<{ status: string }>('GET', `/api/v1/pim/bulk-jobs/${job.body.id}`);
      if (r.body.status === 'COMPLETED') break;
      if (r.body.status === 'FAILED') throw new Error(`bulk import ${job.body.id} failed`);
      await sleep(1_000);
    }
  }
}

/** A process's memory from /proc/<pid>/status, in kB: VmRSS (now) or VmHWM (its peak since it started). */
export function memoryKb(pid: number | undefined, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile' = 'VmRSS'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's VmRSS every `everyMs` until stopped, which returns the peak seen (kB). */
export function rssSampler(pid: () => number | undefined, everyMs = 250) {
  let peak = memoryKb(pid()) ?? 0;
  const timer = setInterval(() => (peak = Math.max(peak, memoryKb(pid()) ?? 0)), everyMs);
  return {
    stop: (): number => {
      clearInterval(timer);
      return Math.max(peak, memoryKb(pid()) ?? 0);
    },
  };
}

export const mb = (kb: number | undefined) => (kb === undefined ? '-' : `${(kb / 1024).toFixed(0)} MB`);
