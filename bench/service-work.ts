import { logEnds, quietKafka } from '../ledger/kafka.ts';
import pg from 'pg';
import { withDatabase } from '../ledger/database.ts';
import { brokerPid } from '../stack/kafka/kafka.ts';
import { stackDir } from '../stack/stack.ts';
import type { Service } from '../test/support/service-process.ts';
import { commandCpu, DatabaseBackends, findPid, machineCpu, processAge, processCpu, type CpuSource } from './cpu.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const localBrokerPid = () => brokerPid(stackDir()) ?? findPid('kafka.Kafka');

/** The local stack's broker and every Postgres process (the postmaster, its background processes and backends). */
export const brokerAndPostgresCpu = (): [kafka: CpuSource, postgres: CpuSource] => {
  const kafkaPid = localBrokerPid();
  return [processCpu('kafka', () => kafkaPid), commandCpu('postgres', 'postgres')];
};

/**
 * The broker's age and the CPU it had spent, as a line of a bench's report: its JIT compiles as load comes, so a broker
 * fresh from `npm run stack:up` spends several times more per request in its first minutes under load (bench/README.md,
 * 2026-12-07), and two runs compare only beside the broker's state at each.
 */
export function brokerAgeLine(when: string): string {
  const pid = localBrokerPid();
  const age = pid === undefined ? undefined : processAge(pid);
  if (!age) return `the broker ${when}: not found`;
  return `the broker ${when}: up ${(age.seconds / 60).toFixed(1)} min, ${age.cpuSeconds.toFixed(0)} s of CPU spent (its JIT warms with load: a young broker costs more per request)`;
}

/**
 * The processes a bench of a service on the local stack reads its CPU from: itself, a baseline server (a process of its
 * own, bench/baseline-process.ts), the service, Kafka, Postgres (and
 * the backends of the databases `backends` watches), the registry, and the machine.
 */
export function stackCpuSources(running: { service?: Service; baseline?: { pid: number } }): {
  sources: CpuSource[];
  backends: DatabaseBackends;
} {
  const registryPid = findPid('quarkus-run.jar');
  const backends = new DatabaseBackends();
  const sources = [
    processCpu('bench', () => process.pid),
    processCpu('baseline', () => running.baseline?.pid),
    processCpu('service', () => running.service?.pid()),
    ...brokerAndPostgresCpu(),
    backends.source('pg: run db'),
    processCpu('registry', () => registryPid),
    machineCpu('machine'),
  ];
  return { sources, backends };
}

/** Waits until the service says it is ready (every dependency up, every part running). */
export async function untilReady(baseUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ready = await fetch(`${baseUrl}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    await sleep(100);
  }
  throw new Error(`service not ready after ${timeoutMs / 1000} s`);
}

export type Work = { xacts: number; tuples: number; offsets: Map<string, number> };

/**
 * The work behind the figures, counted where it happens: the service database's transactions and rows touched
 * (pg_stat_database, flushed by each backend within a second or so of its transactions) and the offsets its topics
 * advanced by (records: commands, events, state, replies; and a commit marker per partition a transaction wrote to).
 */
export async function workCounter(options: { postgresServerUrl: string; brokers: string[]; database: string; namespace: string }) {
  const { database, namespace } = options;
  const stats = new pg.Client({ connectionString: withDatabase(options.postgresServerUrl, 'postgres') });
  await stats.connect();
  const admin = quietKafka(options.brokers, 'bench-work').admin();
  await admin.connect();
  const read = async (): Promise<Work> => {
    const { rows } = await stats.query<{ xacts: string; tuples: string }>(
      `select xact_commit + xact_rollback as xacts, tup_fetched + tup_inserted + tup_updated + tup_deleted as tuples
       from pg_stat_database where datname = $1`,
      [database],
    );
    const offsets = new Map<string, number>();
    for (const topic of (await admin.listTopics()).filter((t) => t.startsWith(`${namespace}.`))) {
      const ends = [...(await logEnds(admin, topic)).values()];
      offsets.set(
        topic.slice(namespace.length + 1),
        ends.reduce((sum, end) => sum + Number(end), 0),
      );
    }
    return { xacts: Number(rows[0]?.xacts ?? 0), tuples: Number(rows[0]?.tuples ?? 0), offsets };
  };
  /** What was done between two readings, per one of `n` operations (`unit` names them). */
  const describe = (name: string, before: Work, after: Work, n: number, unit: string): string => {
    const per = Math.max(1, n);
    const topics = [...after.offsets]
      .map(([topic, high]) => [topic, (high - (before.offsets.get(topic) ?? 0)) / per] as const)
      .filter(([, each]) => each > 0)
      .sort((a, b) => b[1] - a[1]);
    const records = topics.reduce((sum, [, each]) => sum + each, 0);
    return (
      `${name}: Postgres ${((after.xacts - before.xacts) / per).toFixed(1)} transactions and ` +
      `${((after.tuples - before.tuples) / per).toFixed(0)} rows touched per ${unit}; Kafka ${records.toFixed(1)} offsets per ${unit} ` +
      `(${topics.map(([t, each]) => `${t} ${each.toFixed(2)}`).join(', ')})`
    );
  };
  const close = async () => {
    await stats.end();
    await admin.disconnect();
  };
  return { read, describe, close };
}
