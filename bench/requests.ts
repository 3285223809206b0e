import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName } from '../test/support/service-process.ts';
import { measure } from './measure.ts';
import { KAFKA_APIS } from './kafka-apis.ts';

/**
 * Where a product write's round trips go (issue 10): POST /products with read-your-writes at c=20 (`BENCH_REQUESTS`,
 * default 1000, after `BENCH_WARMUP` 1000), counting per write, by thread of the service, the write syscalls (each a
 * request to Kafka or Postgres, or an HTTP answer) and the CPU; the Postgres transactions of the service's database;
 * and, when `strace` is installed, the Kafka requests by API and the Postgres messages by kind (a second, traced run of
 * the same size: strace slows the service, so its rounds are larger and its counts a little lower; `BENCH_TRACE=false`
 * skips it).
 */
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_REQUESTS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 20);

type ThreadUse = { writes: number; cpuTicks: number };
/** Per thread of a process: its write syscalls (`/proc/…/io` syscw) and CPU (utime + stime, in USER_HZ ticks). */
function threadsOf(pid: number): Map<string, ThreadUse> {
  const threads = new Map<string, ThreadUse>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const writes = Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/io`, 'utf8'))?.[1] ?? 0);
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(tid, { writes, cpuTicks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

const PG_MESSAGES: Record<string, string> = { P: 'Postgres extended query (Parse…Sync)', Q: 'Postgres simple query' };

/** What a traced write carried, from its first bytes: a Kafka request's API key, a Postgres message's type, or HTTP. */
function kindOf(call: string, bytes: number[]): string {
  const [b0, b1, b2, b3, b4, b5] = bytes;
  if (bytes.length >= 6 && b0 === 0 && b4 === 0 && b5 !== undefined && KAFKA_APIS[b5] && call === 'write') return `Kafka ${KAFKA_APIS[b5]}`;
  const first = b0 === undefined ? '' : String.fromCharCode(b0);
  if (PG_MESSAGES[first] && b1 === 0) return PG_MESSAGES[first];
  if (first === 'H' && b1 === 0x54 && b2 === 0x54 && b3 === 0x50) return 'HTTP answer';
  return 'other (thread wake-ups, logs)';
}

const namespace = uniqueName('bench-requests');
const database = `cl_${namespace.replace(/-/g, '_')}`;
// One tenant's writes measure the pipeline's capacity here, not a tenant's share of it (RATE_LIMIT_TENANT_IN_FLIGHT).
const service = await startServiceProcess(stack, { namespace, database, env: { LOG_LEVEL: 'error', RATE_LIMIT_TENANT_IN_FLIGHT: '1000' } });
const db = new pg.Client({ connectionString: `${stack.postgresServerUrl}${database}` });
try {
  await db.connect();
  const commits = async () =>
    Number((await db.query('select xact_commit from pg_stat_database where datname = current_database()')).rows[0]?.xact_commit);
  const tenant = await newTenant(service.baseUrl);
  const write = async (i: number) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `requests ${i}` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
  };
  await measure('warm-up', WARMUP, C, write);
  const pid = service.pid();
  if (!pid) throw new Error('no service process');

  const before = threadsOf(pid);
  const commitsBefore = await commits();
  const figures = await measure('POST /products', N, C, write);
  const after = threadsOf(pid);
  const commitsAfter = await commits();
  console.log(`POST /products, read-your-writes (c=${C}): ${N} in ${figures.seconds.toFixed(1)} s, ${(N / figures.seconds).toFixed(0)}/s`);
  console.log(`Postgres transactions of the service's database per write: ${((commitsAfter - commitsBefore) / N).toFixed(2)}`);
  console.log('\nper write, by thread of the service (threads that did work):');
  console.log('thread                      writes    CPU ms');
  for (const [tid, use] of after) {
    const was = before.get(tid);
    if (!was) continue;
    const writes = (use.writes - was.writes) / N;
    const cpuMs = ((use.cpuTicks - was.cpuTicks) * 10) / N;
    if (writes < 0.05 && cpuMs < 0.05) continue;
    // The processor thread talks to Kafka; V8's helper threads (GC, compiler) write nothing.
    const role = tid === String(pid) ? 'main' : writes >= 0.5 ? 'worker' : 'V8 helper';
    console.log(`${`${role} (${tid})`.padEnd(26)} ${writes.toFixed(2).padStart(7)} ${cpuMs.toFixed(2).padStart(9)}`);
  }

  if (process.env.BENCH_TRACE === 'false') {
    // Untraced only.
  } else if (spawnSync('strace', ['-V']).status !== 0) {
    console.log('\nstrace is not installed: no counts by Kafka API and Postgres message (apt-get install strace).');
  } else {
    const out = join(tmpdir(), `${namespace}.strace`);
    const tracer = spawn('strace', ['-f', '-e', 'trace=write,writev', '-s', '8', '-xx', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const traced = await measure('POST /products, traced', N, C, write);
    tracer.kill('SIGINT');
    await new Promise((resolve) => tracer.on('exit', resolve));
    const names = new Map([...after].map(([tid]) => [tid, tid === String(pid) ? 'main' : 'worker']));
    const counts = new Map<string, number>();
    for (const line of readFileSync(out, 'utf8').split('\n')) {
      const match = /^(\d+)\s+(write|writev)\(\d+, (?:\[\{iov_base=)?"((?:\\x[0-9a-f]{2})*)/.exec(line);
      if (!match) continue;
      const bytes = [...(match[3] ?? '').matchAll(/\\x([0-9a-f]{2})/g)].map((m) => parseInt(m[1] ?? '0', 16));
      const key = `${(names.get(match[1] ?? '') ?? 'thread').padEnd(16)} ${kindOf(match[2] ?? '', bytes)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    rmSync(out, { force: true });
    console.log(`\ntraced run (${(N / traced.seconds).toFixed(0)}/s under strace): requests per write, by thread and kind`);
    for (const [key, count] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
      if (count / N >= 0.01) console.log(`${key.padEnd(60)} ${(count / N).toFixed(2).padStart(6)}`);
    }
  }
} finally {
  await db.end().catch(() => undefined);
  await service.discard();
}
