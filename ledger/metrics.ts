import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a fast read (a few ms) to a command that waits out COMMAND_TIMEOUT_MS. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What a command came to, as the edge saw it: the processor's reply, or none (timed out, not written, broker gone). */
export type CommandOutcome = 'accepted' | 'rejected' | 'failed';

/** A number read at scrape time, with its labels (a projection's lag, a part's restarts, …). */
export type Sample = { labels: Record<string, string>; value: number };

/**
 * The one Prometheus registry of a service: the ledger's runtime records into it and the HTTP plugin serves it
 * (`GET /metrics`). One per service instance, not a module global, so that two services in one process do not mix.
 * A command is measured at the edge, from send to reply; the command processors measure their rounds
 * (ledger/processor-metrics.ts) in this registry when they run on the main loop, or in the processor thread's own,
 * whose exposition is then added to this one's at scrape time (`addExposition`; see docs/decisions.md).
 */
export class LedgerMetrics {
  readonly registry = new Registry();
  private readonly expositions: (() => Promise<string>)[] = [];
  readonly httpDuration: Histogram<'route' | 'method' | 'status_code'>;
  private readonly commands: Counter<'topic' | 'outcome'>;
  private readonly commandDuration: Histogram<'topic' | 'outcome'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route pattern, method and status code',
      labelNames: ['route', 'method', 'status_code'],
      buckets: DURATION_BUCKETS,
      registers: [this.registry],
    });
    this.commands = new Counter({
      name: 'ledger_commands_total',
      help: "Commands sent and awaited by the edge, by the aggregate's command topic and outcome (the processor's reply, or failed: no reply)",
      labelNames: ['topic', 'outcome'],
      registers: [this.registry],
    });
    this.commandDuration = new Histogram({
      name: 'ledger_command_duration_seconds',
      help: "Time from sending a command to the processor's reply (or the failure), by the aggregate's command topic and outcome",
      labelNames: ['topic', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers: [this.registry],
    });
  }

  /**
   * Text in the exposition format read at scrape time and served after this registry's (another registry's
   * `metrics()`, e.g. the processor thread's); its metric names must not be this registry's.
   */
  addExposition(read: () => Promise<string>): void {
    this.expositions.push(read);
  }

  /** What GET /metrics serves: this registry's metrics, then every added exposition's (an empty one if it fails). */
  async text(): Promise<string> {
    const parts = await Promise.all([this.registry.metrics(), ...this.expositions.map((read) => read().catch(() => ''))]);
    return parts.map((part) => (part === '' || part.endsWith('\n') ? part : `${part}\n`)).join('');
  }

  /** A command the edge sent and waited for: `topic` is its aggregate's command topic (without the namespace). */
  command(topic: string, outcome: CommandOutcome, seconds: number): void {
    this.commands.inc({ topic, outcome });
    this.commandDuration.observe({ topic, outcome }, seconds);
  }

  /**
   * A gauge whose values are read when Prometheus scrapes: `read` returns every labelled value at that moment.
   * A failing `read` leaves the gauge empty for that scrape rather than failing the whole scrape.
   */
  gauge(name: string, help: string, labelNames: string[], read: () => Sample[] | Promise<Sample[]>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        let samples: Sample[];
        try {
          samples = await read();
        } catch {
          return;
        }
        for (const { labels, value } of samples) this.set(labels, value);
      },
    });
  }
}
