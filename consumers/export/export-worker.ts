import { catalogExportAggregate, type CatalogExportCommand } from '../../commands/export/catalog-export.ts';
import type { CommandInput } from '../../ledger/message.ts';
import type { Worker, WorkerDeps } from '../../ledger/runtime.ts';
import type { Part, PartSignals } from '../../ledger/supervisor.ts';
import { errorField, ThrottledLog } from '../../ledger/throttled-log.ts';
import { WakeUp } from '../../ledger/wake-up.ts';
import { exportProjection } from '../../projections/export/export-projection.ts';
import { exportsToRun, type WorkerExportRow } from '../../projections/export/export-queries.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { sendAs } from '../send-as.ts';
import { writeCatalogSnapshot } from './catalog-snapshot.ts';

const IDLE_POLL_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type ExportWorkerOptions = {
  store: () => ObjectStore;
  /** Exports of different tenants written side by side. */
  exportsAtOnce: number;
  /** How long an export keeps retrying a store or database that fails before it is recorded FAILED. */
  giveUpAfterMs: number;
};

/**
 * The export processor (issue 14): starts each tenant's waiting export once its previous one ended, writes the snapshot
 * (consumers/export/catalog-snapshot.ts) and records the outcome. Its only position is the export's own record: after a
 * crash a RUNNING export is written again from a fresh snapshot under the same keys, and completed once (the aggregate
 * ignores a second completion).
 */
class ExportWorker implements Part {
  private stopping = false;
  private loop?: Promise<void>;
  private readonly wakeUp = new WakeUp();
  private unsubscribe?: () => void;
  private readonly working = new Map<string, Promise<void>>();
  private readonly failingSince = new Map<string, number>();
  /** Exports this process recorded as ended, until the read model (which may lag) shows it too. */
  private readonly ended = new Set<string>();
  private store?: ObjectStore;
  private readonly log;
  private readonly throttled;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: ExportWorkerOptions,
    private readonly signals: PartSignals,
  ) {
    this.log = deps.logger.child({ component: 'export-worker' });
    this.throttled = new ThrottledLog(this.log);
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.store = this.options.store();
    this.unsubscribe = this.deps.onProgress(exportProjection.name, this.wakeUp.wake);
    this.loop = this.run();
    this.signals.running();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeUp.wake();
    await this.loop;
    await Promise.allSettled(this.working.values());
    await this.store?.close();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const free = this.options.exportsAtOnce - this.working.size;
        const next = free > 0 ? await exportsToRun(this.deps.db, this.options.exportsAtOnce * 2) : [];
        if (free > 0) for (const id of this.ended) if (!next.some((r) => r.id === id)) this.ended.delete(id);
        for (const row of next.filter((r) => !this.working.has(r.id) && !this.ended.has(r.id)).slice(0, free)) {
          const work = this.work(row).finally(() => {
            this.working.delete(row.id);
            this.wakeUp.wake();
          });
          this.working.set(row.id, work);
        }
      } catch (error) {
        this.throttled.write('warn', 'export-loop', { err: errorField(error) }, 'export worker could not read its queue; trying again');
        await sleep(1_000);
      }
      if (!this.stopping) await this.wakeUp.wait(IDLE_POLL_MS);
    }
  }

  private send(row: WorkerExportRow, input: CommandInput<CatalogExportCommand>) {
    return sendAs(this.deps.bus, row, catalogExportAggregate, input, { correlationId: row.id });
  }

  private async work(row: WorkerExportRow): Promise<void> {
    const ids = { catalogExportsId: row.catalog_exports_id, exportId: row.id };
    try {
      if (row.status === 'PENDING') await this.send(row, { type: 'StartExport', data: ids });
      const scope = { tenantId: row.tenant_id, orgId: row.org_id };
      const snapshot = await writeCatalogSnapshot(this.deps.db, this.store as ObjectStore, scope, row.id);
      if (this.stopping) return; // written, not recorded: the next start writes it again and records it
      await this.send(row, {
        type: 'CompleteExport',
        data: {
          ...ids,
          manifestKey: snapshot.manifest.key,
          productsKey: snapshot.products.key,
          taxonomyKey: snapshot.taxonomy.key,
          productCount: snapshot.productCount,
          draftCount: snapshot.draftCount,
          excludedCount: snapshot.excludedCount,
          bytes: snapshot.products.bytes + snapshot.taxonomy.bytes + snapshot.manifest.bytes,
          position: JSON.stringify(snapshot.position),
        },
      });
      this.failingSince.delete(row.id);
      this.ended.add(row.id);
      this.log.info({ exportId: row.id, tenantId: row.tenant_id, products: snapshot.productCount }, 'export completed');
    } catch (error) {
      await this.failed(row, error);
    }
  }

  /** A failure is retried (the loop comes back to the export) until it has lasted `giveUpAfterMs`; then it is recorded. */
  private async failed(row: WorkerExportRow, error: unknown): Promise<void> {
    const since = this.failingSince.get(row.id) ?? Date.now();
    this.failingSince.set(row.id, since);
    if (Date.now() - since < this.options.giveUpAfterMs || this.stopping) {
      this.throttled.write('warn', 'export', { err: errorField(error), exportId: row.id }, 'export interrupted; it is written again');
      await sleep(2_000);
      return;
    }
    const reason = error instanceof Error ? error.message : String(error);
    try {
      await this.send(row, { type: 'FailExport', data: { catalogExportsId: row.catalog_exports_id, exportId: row.id, reason } });
      this.failingSince.delete(row.id);
      this.ended.add(row.id);
      this.log.error({ exportId: row.id, err: errorField(error) }, 'export failed');
    } catch (recordError) {
      this.throttled.write('warn', 'export-fail', { err: errorField(recordError), exportId: row.id }, 'could not record a failed export');
      await sleep(2_000);
    }
  }
}

export const exportWorker = (options: ExportWorkerOptions): Worker => ({
  name: 'export',
  create: (deps, signals) => new ExportWorker(deps, options, signals),
});
