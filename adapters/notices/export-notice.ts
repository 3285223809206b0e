/**
 * The completion notice of a catalog export: one JSON document, the same for the webhook (its body, signed) and the
 * email (its facts). docs/decisions.md, "Export completion notices", shows it.
 */

export type ExportNoticeType = 'catalog.export.completed' | 'catalog.export.failed';

export type ExportNotice = {
  type: ExportNoticeType;
  /** The export's id: one export has one notice, so a receiver dedupes on it (and on the webhook-id header, the same). */
  id: string;
  /** When the export ended (ISO 8601, UTC), the same on every delivery attempt. */
  created_at: string;
  data: {
    export_id: string;
    tenant_id: string;
    org_id: string;
    status: 'COMPLETED' | 'FAILED';
    /** Products written; 0 when failed. */
    product_count: number;
    /** Of those, DRAFT products (written and marked); 0 when failed. */
    draft_count: number;
    /** Products left out for an open ERROR validation issue (the manifest names them); 0 when failed. */
    excluded_count: number;
    /** A time-limited link to the gzip-compressed JSON lines of the products; null when failed. */
    download_url: string | null;
    download_expires_at: string | null;
    /** A time-limited link to the manifest (counts, checksums, excluded ids, log position); null when failed or not given. */
    manifest_url: string | null;
    /** Why the export failed; null when completed. */
    error: string | null;
  };
};

type Ended = { exportId: string; tenantId: string; orgId: string; endedAt: Date };
export type CompletedExport = Ended & {
  status: 'COMPLETED';
  productCount: number;
  draftCount?: number;
  excludedCount: number;
  download: { url: string; expiresAt: Date };
  manifestUrl?: string | null;
};
export type FailedExport = Ended & { status: 'FAILED'; error: string };

/** The notice of an ended export. */
export function exportNotice(ended: CompletedExport | FailedExport): ExportNotice {
  const common = { export_id: ended.exportId, tenant_id: ended.tenantId, org_id: ended.orgId, status: ended.status };
  const envelope = { id: ended.exportId, created_at: ended.endedAt.toISOString() };
  switch (ended.status) {
    case 'COMPLETED':
      return {
        type: 'catalog.export.completed',
        ...envelope,
        data: {
          ...common,
          product_count: ended.productCount,
          draft_count: ended.draftCount ?? 0,
          excluded_count: ended.excludedCount,
          download_url: ended.download.url,
          download_expires_at: ended.download.expiresAt.toISOString(),
          manifest_url: ended.manifestUrl ?? null,
          error: null,
        },
      };
    case 'FAILED':
      return {
        type: 'catalog.export.failed',
        ...envelope,
        data: {
          ...common,
          product_count: 0,
          draft_count: 0,
          excluded_count: 0,
          download_url: null,
          download_expires_at: null,
          manifest_url: null,
          error: ended.error,
        },
      };
    default: {
      const exhaustive: never = ended;
      throw new Error(`unknown export outcome ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** The exact bytes a webhook carries and signs: serialize once, sign and send the same string. */
export const noticeBody = (notice: ExportNotice): string => JSON.stringify(notice);
