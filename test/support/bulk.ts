import type { Tenant } from './client.ts';

export type BulkJob = {
  id: string;
  tenant_id: string;
  org_id: string;
  job_type: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  total_items: number | null;
  processed_items: number | null;
  failed_items: number | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  payload_json?: string;
  errors?: { item_index: number; code: string; message: string; product_id: string | null }[];
};

export const submitJob = (tenant: Tenant, jobType: string, payload: unknown) =>
  tenant.request<BulkJob>('POST', '/api/v1/pim/bulk-jobs', { job_type: jobType, payload });

export const readJob = async (tenant: Tenant, id: string): Promise<BulkJob> =>
  (await tenant.request<BulkJob>('GET', `/api/v1/pim/bulk-jobs/${id}`)).body;

/** Polls the job until it ends (COMPLETED or FAILED), keeping every state it was seen in. */
export async function jobEnd(tenant: Tenant, id: string, deadlineMs = 120_000): Promise<{ job: BulkJob; seen: BulkJob[] }> {
  const seen: BulkJob[] = [];
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const job = await readJob(tenant, id);
    seen.push(job);
    if (job.status === 'COMPLETED' || job.status === 'FAILED') return { job, seen };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`bulk job ${id} did not end within ${deadlineMs} ms; last seen ${JSON.stringify(seen.at(-1))}`);
}
