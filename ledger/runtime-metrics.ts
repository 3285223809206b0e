import { ConsumerLagReader } from './consumer-lag.ts';
import { createKafka } from './kafka.ts';
import { kafkaBrokers } from './config-derived.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { RunnerOf, RunningParts, RuntimeContext } from './runtime-parts.ts';
import type { Supervisor } from './supervisor.ts';
import { namespaced } from './topics.ts';

/**
 * The runtime's gauges, read at scrape time: each projection's lag and each part's restarts (as readiness reads
 * them), and every consumer group's lag as the brokers see it. `knownParts`: the groups of the processor thread.
 */
export function exposeRuntimeMetrics(
  { config, logger }: RuntimeContext,
  metrics: LedgerMetrics,
  parts: RunningParts,
  knownParts: readonly string[],
): void {
  exposeRuntimeGauges(metrics, parts.runners, parts.statuses);
  // Its own client, silent: a broker outage is already logged by every part, and a scrape then serves the last lags.
  const lagKafka = createKafka(kafkaBrokers(config), 'commerce-ledger', logger.child({}, { level: 'silent' }));
  const namespace = config.LEDGER_NAMESPACE;
  const lags = new ConsumerLagReader(
    lagKafka,
    namespaced(namespace, 'commerce-ledger.'),
    new Set(knownParts.map((part) => namespaced(namespace, `commerce-ledger.${part}`))),
  );
  parts.onStop(() => lags.stop());
  exposeConsumerLag(metrics, lags);
}

/** Gauges read at scrape time from what readiness reads too: each projection's lag and each supervised part's restarts. */
function exposeRuntimeGauges(metrics: LedgerMetrics, runners: readonly RunnerOf[], statuses: readonly Pick<Supervisor, 'status'>[]): void {
  // A restarted projection part creates a new runner: the latest of each name is the one running.
  const lags = () => [...new Map(runners.map(({ name, runner }) => [name, runner.lagBehind(name)])).entries()];
  metrics.gauge(
    'ledger_projection_lag_events',
    'Events a live projection has yet to apply: the log end minus its checkpoint, summed over its partitions',
    ['projection'],
    () => lags().map(([projection, value]) => ({ labels: { projection }, value })),
  );
  metrics.gauge('ledger_projections_lag_events', 'Events all live projections together have yet to apply', [], () => [
    { labels: {}, value: lags().reduce((sum, [, value]) => sum + value, 0) },
  ]);
  metrics.gauge(
    'ledger_part_restarts',
    'Restarts of each supervised part since the service started (processor-thread parts as relayed from the thread)',
    ['part'],
    () => statuses.map((supervisor) => supervisor.status()).map(({ name, restarts }) => ({ labels: { part: name }, value: restarts })),
  );
}

/**
 * `ledger_consumer_lag{group,topic,partition}` and `ledger_consumer_lag_age_seconds`, read from the brokers when scraped
 * (both gauges share one reading): the last values stand, and their age grows, while the brokers do not answer.
 */
function exposeConsumerLag(metrics: LedgerMetrics, lags: ConsumerLagReader): void {
  metrics.gauge(
    'ledger_consumer_lag',
    "Records of a partition a consumer group of the service has yet to commit: the log end minus the group's committed offset",
    ['group', 'topic', 'partition'],
    async () =>
      ((await lags.read())?.samples ?? []).map(({ group, topic, partition, lag }) => ({
        labels: { group, topic, partition: String(partition) },
        value: lag,
      })),
  );
  metrics.gauge('ledger_consumer_lag_age_seconds', 'Seconds since ledger_consumer_lag was read from the brokers', [], async () => {
    const read = await lags.read();
    return read ? [{ labels: {}, value: read.ageSeconds }] : [];
  });
}
