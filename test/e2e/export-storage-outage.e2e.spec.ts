import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3PROXY_ACCESS_KEY_ID, S3PROXY_SECRET_ACCESS_KEY } from '../../stack/s3/s3proxy.ts';
import { downloadExport, exportEnd, listExports, requestExport } from '../support/exports.ts';
import { startPrivateS3, type PrivateS3 } from '../support/private-s3.ts';
import { useServiceAndTenant } from '../support/service-and-tenant.ts';

let s3: PrivateS3;
beforeAll(async () => {
  s3 = await startPrivateS3('export-s3');
});
afterAll(async () => {
  await s3?.destroy();
});

const ctx = useServiceAndTenant(() => ({
  env: {
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: `outage-${randomUUID()}`,
    S3_ACCESS_KEY_ID: S3PROXY_ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY: S3PROXY_SECRET_ACCESS_KEY,
  },
}));

describe('catalog export while the object store is away', () => {
  it('keeps the export running while S3 is down and completes it, whole and once, when S3 is back', async () => {
    const tenant = ctx.tenant;
    for (let i = 0; i < 20; i++) {
      expect((await tenant.request('POST', '/api/v1/pim/products', { title: `Stored ${i}`, description: 'd' })).status).toBe(201);
    }
    await s3.stop();
    const accepted = await requestExport(tenant);
    // Requesting needs only the ledger: accepted at once with the store down.
    expect(accepted.status).toBe(202);
    const waitedUntil = Date.now() + 8_000;
    while (Date.now() < waitedUntil) {
      const record = (await listExports(tenant)).find((e) => e.id === accepted.body.export_id);
      expect(record?.status).not.toBe('COMPLETED');
      expect(record?.status).not.toBe('FAILED');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await s3.start();
    const { record } = await exportEnd(tenant, accepted.body.export_id);
    expect(record).toMatchObject({ status: 'COMPLETED', product_count: 20 });
    expect((await downloadExport(record)).products).toHaveLength(20);
    expect(await listExports(tenant)).toHaveLength(1);
  });
});
