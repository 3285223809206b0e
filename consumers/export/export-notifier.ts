import { catalogExportAggregate, type NoticeChannel } from '../../commands/export/catalog-export.ts';
import { noticeSecretOf } from '../../commands/integrations/webhook-secret.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { ownerOfRow, sendCommand } from '../../ledger/send-command.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { exportProjection } from '../../projections/export/export-projection.ts';
import { noticesOwed, type WorkerExportRow } from '../../projections/export/export-queries.ts';
import { findWebhookSecret, versionsInForce } from '../../projections/integrations/webhook-secrets-queries.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { sendEmailNotice } from '../../adapters/notices/email-notice.ts';
import { exportNotice, noticeBody, type ExportNotice } from '../../adapters/notices/export-notice.ts';
import type { NoticeOutcome } from '../../adapters/notices/notice-delivery.ts';
import { sendWebhookNotice, type NoticeSecrets } from '../../adapters/notices/webhook-notice.ts';

export type ExportNotifierOptions = {
  store: () => ObjectStore;
  /** The key every tenant's webhook and notice secrets derive from (WEBHOOK_SECRET_KEY or the development key). */
  webhookSecretKey: string;
  smtpUrl: string | undefined;
  /** NOTICE_ALLOW_PRIVATE_NETWORKS: webhooks may reach loopback and private addresses. */
  allowPrivateNetworks: boolean;
  from: string;
  /** How long the link a notice carries stays valid: receivers may fetch it well after the notice. */
  linkSeconds: number;
  noticesAtOnce: number;
};

type Owed = WorkerExportRow & { channel: NoticeChannel };

/**
 * Sends each ended export's notices (issue 14: webhook and/or email, as configured when it ended) and records every
 * outcome on the export, so each notice goes out once: after a crash, only notices with no recorded outcome are sent
 * again (at least once; the webhook-id header, the export's id, lets a receiver drop a repeat).
 */
class ExportNotifier {
  private abort = new AbortController();
  private store?: ObjectStore;

  private readonly context: WorkerContext;
  private readonly options: ExportNotifierOptions;

  constructor(context: WorkerContext, options: ExportNotifierOptions) {
    this.context = context;
    this.options = options;
  }

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'export-notifier', this.options.noticesAtOnce, {
      queue: (limit) => noticesOwed(this.context.deps.db, limit),
      keyOf: (owed: Owed) => `${owed.id}/${owed.channel}`,
      work: (owed) => this.work(owed),
    }).hooks({
      open: async () => {
        this.abort = new AbortController();
        this.store = this.options.store();
      },
      stopping: () => this.abort.abort(),
      close: async () => {
        await this.store?.close();
      },
    });
  }

  private async work(owed: Owed): Promise<boolean> {
    const notice = await this.noticeOf(owed);
    const outcome = owed.channel === 'webhook' ? await this.webhook(owed, notice) : await this.email(owed, notice);
    if (this.abort.signal.aborted) return false; // stopped mid-delivery: the next start sends it again
    const detail = outcome.delivered ? null : (outcome.error ?? `answered ${outcome.status}`);
    const data = {
      catalogExportsId: owed.catalog_exports_id,
      exportId: owed.id,
      channel: owed.channel,
      delivered: outcome.delivered,
      attempts: outcome.attempts,
      detail,
    };
    await sendCommand(
      this.context.deps.bus,
      ownerOfRow(owed),
      catalogExportAggregate,
      { type: 'RecordExportNotice', data },
      { correlationId: owed.id },
    );
    const log = { exportId: owed.id, channel: owed.channel, attempts: outcome.attempts, detail };
    if (outcome.delivered) this.context.log.info(log, 'export notice delivered');
    else this.context.log.warn(log, 'export notice not delivered');
    return true;
  }

  private async noticeOf(row: Owed): Promise<ExportNotice> {
    const ended = { exportId: row.id, tenantId: row.tenant_id, orgId: row.org_id, endedAt: row.finished_at ?? new Date() };
    if (row.status !== 'COMPLETED' || !row.products_key || !row.manifest_key) {
      return exportNotice({ ...ended, status: 'FAILED', error: row.error ?? 'the export failed' });
    }
    const store = this.store as ObjectStore;
    const expiresInSeconds = this.options.linkSeconds;
    const [url, manifestUrl] = await Promise.all([
      store.downloadUrl(row.products_key, { expiresInSeconds, filename: `catalog-${row.id}-products.jsonl.gz` }),
      store.downloadUrl(row.manifest_key, { expiresInSeconds, filename: `catalog-${row.id}-manifest.json` }),
    ]);
    return exportNotice({
      ...ended,
      status: 'COMPLETED',
      productCount: row.product_count ?? 0,
      draftCount: row.draft_count ?? 0,
      excludedCount: row.excluded_count ?? 0,
      download: { url, expiresAt: new Date(Date.now() + expiresInSeconds * 1_000) },
      manifestUrl,
    });
  }

  private async webhook(row: Owed, notice: ExportNotice): Promise<NoticeOutcome> {
    const found = await findWebhookSecret(this.context.deps.db, { tenantId: row.tenant_id, orgId: row.org_id });
    const { current, previous } = versionsInForce(found, Date.now());
    const secretOf = (version: number) => noticeSecretOf(this.options.webhookSecretKey, row.tenant_id, row.org_id, version);
    // During a rotation's grace both sign, so a receiver that still holds the previous secret verifies the notice too.
    const secrets: NoticeSecrets = previous ? [secretOf(current), secretOf(previous.version)] : [secretOf(current)];
    const url = row.notify_webhook_url as string;
    const { allowPrivateNetworks } = this.options;
    return sendWebhookNotice({ url, secrets, body: noticeBody(notice), id: notice.id, signal: this.abort.signal, allowPrivateNetworks });
  }

  private email(row: Owed, notice: ExportNotice): Promise<NoticeOutcome> {
    const { smtpUrl, from } = this.options;
    return sendEmailNotice({ smtpUrl, from, to: row.notify_email as string, notice, signal: this.abort.signal });
  }
}

export const exportNotifier = (options: ExportNotifierOptions): Worker =>
  defineWorker({
    name: 'export-notifier',
    component: 'export-notifier',
    source: { kind: 'queue', wokenBy: [exportProjection.name], idlePollMs: 5_000 },
    hooks: (context) => new ExportNotifier(context, options).hooks(),
  });
