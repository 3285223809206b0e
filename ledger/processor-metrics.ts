import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Seconds: a round's decisions or its Kafka transaction, from a millisecond to a transaction stuck in retries. */
const ROUND_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Commands decided in one transaction. */
const SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500];

/** What one round of a command processor decided, per aggregate (the leader and its followers): counted by the caller. */
export type RoundTally = Map<string, { accepted: number; rejected: number }>;

/** The clock of a round: `process.hrtime.bigint()` read twice per round, never per command. */
export const startTimer = (): (() => number) => {
  const start = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - start) / 1e9;
};

/**
 * Metrics of the command processors and event routers, recorded once per round (one Kafka transaction), never per
 * command: a round's commands are tallied in plain numbers by the processor and added here in one call per aggregate.
 * Registered on the registry given: the service's own when the processors run on the main loop, the processor
 * thread's own otherwise, whose text exposition the main thread appends to its own on every scrape
 * (ledger/thread-part.ts).
 */
export class ProcessorMetrics {
  private readonly decideDuration: Histogram<'aggregate'>;
  private readonly decided: Counter<'aggregate' | 'outcome'>;
  private readonly roundCommands: Histogram<'aggregate'>;
  private readonly transactionDuration: Histogram<'part'>;
  private readonly transactions: Counter<'part' | 'outcome'>;
  private readonly restoredRecords: Counter<'aggregate'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.decideDuration = new Histogram({
      name: 'ledger_decide_duration_seconds',
      help: "Time a command processor took to decide one round's commands (one transaction's), by the leading aggregate",
      labelNames: ['aggregate'],
      buckets: ROUND_BUCKETS,
      registers,
    });
    this.decided = new Counter({
      name: 'ledger_decided_commands_total',
      help: 'Commands decided by the command processors, by aggregate (followers included) and outcome (accepted, rejected)',
      labelNames: ['aggregate', 'outcome'],
      registers,
    });
    this.roundCommands = new Histogram({
      name: 'ledger_round_commands',
      help: 'Commands decided in one Kafka transaction of a command processor (the batch size), by the leading aggregate',
      labelNames: ['aggregate'],
      buckets: SIZE_BUCKETS,
      registers,
    });
    this.transactionDuration = new Histogram({
      name: 'ledger_transaction_duration_seconds',
      help: 'Duration of the Kafka transactions of the command processors and event routers, from begin to commit or abort, by part',
      labelNames: ['part'],
      buckets: ROUND_BUCKETS,
      registers,
    });
    this.transactions = new Counter({
      name: 'ledger_transactions_total',
      help: 'Kafka transactions of the command processors and event routers, by part and outcome (committed, aborted)',
      labelNames: ['part', 'outcome'],
      registers,
    });
    this.restoredRecords = new Counter({
      name: 'ledger_state_restored_records_total',
      help: 'State changelog records read to restore assigned partitions (with the state store, only the tail past what it holds), by aggregate',
      labelNames: ['aggregate'],
      registers,
    });
    // The thread's own V8 heap (the main thread's is nodejs_heap_size_*_bytes): the default metrics cannot be registered
    // here, their names would clash with the main thread's in the one exposition.
    new Gauge({
      name: 'ledger_processor_thread_heap_bytes',
      help: "The processor thread's V8 heap: used, total (reserved by V8) and external (Buffers and strings held outside it)",
      labelNames: ['kind'],
      registers,
      collect() {
        const heap = getHeapStatistics();
        this.set({ kind: 'used' }, heap.used_heap_size);
        this.set({ kind: 'total' }, heap.total_heap_size);
        this.set({ kind: 'external' }, heap.external_memory);
      },
    });
  }

  /** A restore of assigned partitions read `records` state records of the aggregate's changelog. */
  restored(aggregate: string, records: number): void {
    this.restoredRecords.inc({ aggregate }, records);
  }

  /** A command processor's round, once its transaction has committed: its decision time, size and outcomes. */
  round(aggregate: string, decideSeconds: number, commands: number, tally: RoundTally): void {
    this.decideDuration.observe({ aggregate }, decideSeconds);
    this.roundCommands.observe({ aggregate }, commands);
    for (const [name, { accepted, rejected }] of tally) {
      if (accepted > 0) this.decided.inc({ aggregate: name, outcome: 'accepted' }, accepted);
      if (rejected > 0) this.decided.inc({ aggregate: name, outcome: 'rejected' }, rejected);
    }
  }

  /** One Kafka transaction of a processor or router (`part`: `product-processor`, `order-fulfilment-router`, …). */
  transaction(part: string, outcome: 'committed' | 'aborted', seconds: number): void {
    this.transactions.inc({ part, outcome });
    this.transactionDuration.observe({ part }, seconds);
  }
}

/** Times `work` as one transaction of `part`: committed when it resolves, aborted when it throws (then rethrown). */
export async function timedTransaction<T>(metrics: ProcessorMetrics | undefined, part: string, work: () => Promise<T>): Promise<T> {
  if (!metrics) return work();
  const elapsed = startTimer();
  try {
    const result = await work();
    metrics.transaction(part, 'committed', elapsed());
    return result;
  } catch (error) {
    metrics.transaction(part, 'aborted', elapsed());
    throw error;
  }
}
