import { Worker } from 'node:worker_threads';
import { strippedApart } from './stripped-hooks.mjs';
import { sizeProcessorYoungGeneration } from './heap-growth.ts';
import type { CommandReply } from './command-reply.ts';
import type { LedgerConfig } from './config.ts';
import type { LocalReplies } from './reply-handover.ts';
import type { Logger } from './logger.ts';
import type { Part, PartSignals, PartStatus } from './supervisor.ts';

/** `metrics`: a scrape asks for the thread's metrics (ledger/processor-metrics.ts), answered with their exposition text. */
export type ToThread = { type: 'stop' } | { type: 'metrics'; id: number };
export type FromThread =
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'status'; statuses: PartStatus[] }
  | { type: 'start-failed'; message: string }
  | { type: 'metrics'; id: number; text: string }
  | { type: 'replies'; replies: CommandReply[] };

const STOP_TIMEOUT_MS = 15_000;
/** A scrape waits this long for the thread's metrics, then serves the last ones it sent (a busy or restarting thread). */
const METRICS_TIMEOUT_MS = 1_000;

/**
 * The processors' worker thread as one part of the main thread's runtime: started (and restarted by its supervisor)
 * whole; the statuses of the parts inside it are relayed for readiness, the last ones heard standing until the next.
 */
export class ProcessorThread implements Part {
  private worker?: Worker;
  private stopping = false;
  private statuses = new Map<string, PartStatus>();
  private readonly metricsRequests = new Map<number, (text: string) => void>();
  private metricsRequestId = 0;
  private lastMetrics = '';

  private readonly config: LedgerConfig;
  private readonly modules: URL;
  private readonly schemaIds: [string, number][];
  private readonly logger: Logger;
  private readonly signals: PartSignals;
  /** The main thread's bus, to which the thread's processors hand the replies it awaits. */
  private readonly replies: LocalReplies;

  constructor(
    config: LedgerConfig,
    modules: URL,
    schemaIds: [string, number][],
    logger: Logger,
    signals: PartSignals,
    replies: LocalReplies,
  ) {
    this.config = config;
    this.modules = modules;
    this.schemaIds = schemaIds;
    this.logger = logger;
    this.signals = signals;
    this.replies = replies;
  }

  /** One status reader per part inside the thread, named as that part. */
  readers(names: readonly string[]): { status: () => PartStatus }[] {
    return names.map((name) => ({
      status: () => this.statuses.get(name) ?? { name, state: 'starting', restarts: 0, lastFailureAt: 0 },
    }));
  }

  /**
   * The thread's metrics in the exposition format, asked for at scrape time (so the thread does no metrics work unless
   * scraped); the last text it sent when it does not answer within a second or is not running.
   */
  metricsText(timeoutMs = METRICS_TIMEOUT_MS): Promise<string> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(this.lastMetrics);
    const id = ++this.metricsRequestId;
    return new Promise<string>((resolve) => {
      const timer = setTimeout(() => {
        this.metricsRequests.delete(id);
        resolve(this.lastMetrics);
      }, timeoutMs);
      this.metricsRequests.set(id, (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      worker.postMessage({ type: 'metrics', id } satisfies ToThread);
    });
  }

  async start(): Promise<void> {
    this.stopping = false;
    const entry = new URL('./processor-thread.ts', import.meta.url).href;
    // Where Node strips types, the thread's modules come stripped by a thread of their own (ledger/stripped-hooks.mjs).
    const sources = process.features.typescript ? await strippedApart([entry, this.modules.href]) : undefined;
    // Just before the thread's isolate is made (the flag sizes every isolate made from then on).
    sizeProcessorYoungGeneration();
    const worker = new Worker(new URL('./thread-boot.mjs', import.meta.url), {
      workerData: {
        entry,
        sources,
        config: this.config,
        modules: this.modules.href,
        schemaIds: this.schemaIds,
        replyAddress: this.replies.address,
      },
    });
    this.worker = worker;
    let started = false;
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'replies') this.replies.deliver(message.replies);
        else if (message.type === 'status') for (const status of message.statuses) this.statuses.set(status.name, status);
        else if (message.type === 'metrics') {
          this.lastMetrics = message.text;
          this.metricsRequests.get(message.id)?.(message.text);
          this.metricsRequests.delete(message.id);
        } else if (message.type === 'started') {
          started = true;
          resolve();
        } else if (message.type === 'start-failed') reject(new Error(`the processor thread could not start: ${message.message}`));
      });
      worker.on('error', (error) => {
        this.logger.error({ err: error }, 'processor thread failed');
        reject(error);
      });
      worker.on('exit', (code) => {
        reject(new Error(`the processor thread exited with ${code} while starting`));
        // A thread that never started is its start's failure, not a failure of a running part.
        if (!started || this.worker !== worker || this.stopping) return;
        this.worker = undefined;
        for (const [name, status] of this.statuses) this.statuses.set(name, { ...status, state: 'restarting' });
        this.signals.failed(new Error(`the processor thread exited with ${code}`));
      });
    });
    this.signals.running();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'stop' } satisfies ToThread);
    const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}
