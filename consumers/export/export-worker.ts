import { catalogExportAggregate, type CatalogExportCommand } from '../../commands/export/catalog-export.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import type { CommandInput } from '../../ledger/message.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { ownerOfRow, sendCommand } from '../../ledger/send-command.ts';
import { errorField } from '../../ledger/throttled-log.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { exportProjection } from '../../projections/export/export-projection.ts';
import { exportsToRun, type WorkerExportRow } from '../../projections/export/export-queries.ts';
import { writeCatalogSnapshot } from './catalog-snapshot.ts';

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
class ExportWorker {
  private readonly failingSince = new Map<string, number>();
  private store?: ObjectStore;

  private readonly context: WorkerContext;
  private readonly options: ExportWorkerOptions;

  constructor(context: WorkerContext, options: ExportWorkerOptions) {
    this.context = context;
    this.options = options;
  }

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'export-worker', this.options.exportsAtOnce, {
      queue: (limit) => exportsToRun(this.context.deps.db, limit),
      keyOf: (row: WorkerExportRow) => row.id,
      work: (row) => this.work(row),
    }).hooks({
      open: async () => {
        this.store = this.options.store();
      },
      close: async () => {
        await this.store?.close();
      },
    });
  }

  private send(row: WorkerExportRow, input: CommandInput<CatalogExportCommand>) {
    return sendCommand(this.context.deps.bus, ownerOfRow(row), catalogExportAggregate, input, { correlationId: row.id });
  }

  private async work(row: WorkerExportRow): Promise<boolean> {
    const ids = { catalogExportsId: row.catalog_exports_id, exportId: row.id };
    try {
      if (row.status === 'PENDING') await this.send(row, { type: 'StartExport', data: ids });
      const scope = { tenantId: row.tenant_id, orgId: row.org_id };
      const started = performance.now();
      const snapshot = await writeCatalogSnapshot(this.context.deps.db, this.store as ObjectStore, scope, row.id);
      if (this.context.stopping()) return false; // written, not recorded: the next start writes it again and records it
      const written = performance.now();
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
      const ms = { writeMs: Math.round(written - started), recordMs: Math.round(performance.now() - written) };
      this.context.log.info({ exportId: row.id, tenantId: row.tenant_id, products: snapshot.productCount, ...ms }, 'export completed');
      return true;
    } catch (error) {
      return this.failed(row, error);
    }
  }

  /** A failure is retried (the queue gives the export back) until it has lasted `giveUpAfterMs`; then it is recorded. */
  private async failed(row: WorkerExportRow, error: unknown): Promise<boolean> {
    const since = this.failingSince.get(row.id) ?? Date.now();
    this.failingSince.set(row.id, since);
    if (Date.now() - since < this.options.giveUpAfterMs || this.context.stopping()) {
      this.context.throttled.write(
        'warn',
        'export',
        { err: errorField(error), exportId: row.id },
        'export interrupted; it is written again',
      );
      return false;
    }
    const reason = error instanceof Error ? error.message : String(error);
    await this.send(row, { type: 'FailExport', data: { catalogExportsId: row.catalog_exports_id, exportId: row.id, reason } });
    this.failingSince.delete(row.id);
    this.context.log.error({ exportId: row.id, err: errorField(error) }, 'export failed');
    return true;
  }
}

export const exportWorker = (options: ExportWorkerOptions): Worker =>
  defineWorker({
    name: 'export',
    component: 'export-worker',
    source: { kind: 'queue', wokenBy: [exportProjection.name], idlePollMs: 5_000 },
    hooks: (context) => new ExportWorker(context, options).hooks(),
  });
