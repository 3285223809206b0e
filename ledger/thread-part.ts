import { Worker } from 'node:worker_threads';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Part, PartSignals, PartStatus } from './supervisor.ts';

export type ToThread = { type: 'stop' };
export type FromThread =
  { type: 'started' } | { type: 'stopped' } | { type: 'status'; statuses: PartStatus[] } | { type: 'start-failed'; message: string };

const STOP_TIMEOUT_MS = 15_000;

/**
 * The processors' worker thread as one part of the main thread's runtime: started (and restarted by its supervisor)
 * whole; the statuses of the parts inside it are relayed for readiness, the last ones heard standing until the next.
 */
export class ProcessorThread implements Part {
  private worker?: Worker;
  private stopping = false;
  private statuses = new Map<string, PartStatus>();

  constructor(
    private readonly config: Config,
    private readonly modules: URL,
    private readonly schemaIds: [string, number][],
    private readonly logger: Logger,
    private readonly signals: PartSignals,
  ) {}

  /** One status reader per part inside the thread, named as that part. */
  readers(names: readonly string[]): { status: () => PartStatus }[] {
    return names.map((name) => ({
      status: () => this.statuses.get(name) ?? { name, state: 'starting', restarts: 0, lastFailureAt: 0 },
    }));
  }

  async start(): Promise<void> {
    this.stopping = false;
    const worker = new Worker(new URL('./thread-boot.mjs', import.meta.url), {
      workerData: {
        entry: new URL('./processor-thread.ts', import.meta.url).href,
        config: this.config,
        modules: this.modules.href,
        schemaIds: this.schemaIds,
      },
    });
    this.worker = worker;
    let started = false;
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'status') for (const status of message.statuses) this.statuses.set(status.name, status);
        else if (message.type === 'started') {
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
