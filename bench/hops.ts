import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureStack } from '../stack/stack.ts';
import { newTenant } from '../test/support/client.ts';
import { startServiceProcess, uniqueName } from '../test/support/service-process.ts';
import { brokerAgeLine } from './service-work.ts';
import { measure, percentile } from './measure.ts';
import { KAFKA_APIS } from './kafka-apis.ts';

/**
 * One product write at c=1, hop by hop (issue 30): `BENCH_HOPS_WRITES` (default 300, after `BENCH_WARMUP` 300) writes
 * one at a time to a service of its own preloaded with `hop-trace.mjs`, which notes every Kafka request, `pg` query and
 * HTTP request with its wall-clock start and end, by thread. Printed: the median of each step of a write across the
 * writes, and the median write's own timeline. The steps are found by what they send (the command's Produce from the
 * main thread, the transaction's requests from the processor thread, the catalog projection's two Postgres round
 * trips), so a write whose steps are not all found (a round that carried two writes) is left out of the medians.
 */
const stack = await ensureStack({ log: () => undefined });
const N = Number(process.env.BENCH_HOPS_WRITES ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);

const TRANSACTION = ['AddPartitionsToTxn', 'Produce', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn'];

type Noted = { kind: 'kafka' | 'pg' | 'http'; name: string | number; start: number; end: number };
type Hop = { kind: string; name: string; start: number; end: number; thread: string };

const brokerAgeAtStart = brokerAgeLine('when this run began');
const traceDir = mkdtempSync(join(tmpdir(), 'hops-'));
const preload = join(import.meta.dirname, 'hop-trace.mjs');
process.env.SERVICE_NODE_ARGS = `${process.env.SERVICE_NODE_ARGS ?? ''} --import ${preload}`;
const namespace = uniqueName('bench-hops');
const service = await startServiceProcess(stack, { namespace, env: { LOG_LEVEL: 'error', HOP_TRACE_DIR: traceDir } });
let figures;
try {
  const tenant = await newTenant(service.baseUrl);
  const write = async (i: number) => {
    const r = await tenant.request('POST', '/api/v1/pim/products', { title: `hops ${i}` });
    if (r.status !== 201) throw new Error(`create answered ${r.status}`);
  };
  await measure('warm-up', WARMUP, 1, write);
  figures = await measure('POST /products c=1', N, 1, write);
} finally {
  await service.discard();
}

const hops: Hop[] = readdirSync(traceDir).flatMap((file) => {
  const thread = /-(\d+)\.json$/.exec(file)?.[1] === '0' ? 'main' : 'thread';
  return (JSON.parse(readFileSync(join(traceDir, file), 'utf8')) as Noted[]).map(({ kind, name, start, end }) => ({
    kind,
    name: kind === 'kafka' ? (KAFKA_APIS[name as number] ?? `api ${name}`) : String(name),
    start,
    end,
    thread,
  }));
});
rmSync(traceDir, { recursive: true, force: true });
hops.sort((a, b) => a.start - b.start);
const writes = hops.filter((hop) => hop.kind === 'http' && hop.name.startsWith('POST /api/v1/pim/products')).slice(-N);

/** The processor thread's request `name` that starts at or after `from` (and, if given, ends before `until`). */
const requestIn = (inside: Hop[], name: string, from: number, until = Infinity) =>
  inside.find((hop) => hop.thread !== 'main' && hop.name === name && hop.start >= from && hop.end <= until);

/**
 * A write's steps in ms (undefined for one it did not take: transactions version 2 sends no AddPartitionsToTxn and no
 * AddOffsetsToTxn), or undefined when a step every write takes is not found.
 */
function stepsOf(write: Hop): { steps: [string, number | undefined][]; inside: Hop[] } | undefined {
  const within = (t: number) => t >= write.start && t <= write.end;
  const inside = hops.filter((hop) => hop !== write && (within(hop.start) || within(hop.end)));
  const produce = inside.find((hop) => hop.thread === 'main' && hop.name === 'Produce' && hop.start >= write.start);
  const events = produce && requestIn(inside, 'Produce', produce.start);
  const offsets = events && requestIn(inside, 'TxnOffsetCommit', events.end);
  const endTxn = offsets && requestIn(inside, 'EndTxn', offsets.end);
  if (!produce || !events || !offsets || !endTxn) return undefined;
  const addPartitions = requestIn(inside, 'AddPartitionsToTxn', produce.start, events.start);
  const addOffsets = requestIn(inside, 'AddOffsetsToTxn', events.end, offsets.start);
  const transaction = [addPartitions, events, addOffsets, offsets, endTxn];
  // The processor may hear of the command before the edge hears that it is written.
  const first = addPartitions ?? events;
  // The catalog's writes, then the last transaction begun before them (the push runner's may begin first).
  const writes = inside.find((hop) => hop.kind === 'pg' && hop.start >= endTxn.end && hop.name.startsWith('insert into "rm_catalog"'));
  const begin =
    writes &&
    [...inside]
      .reverse()
      .find((hop) => hop.kind === 'pg' && hop.start >= endTxn.end && hop.end <= writes.start && hop.name.startsWith('begin'));
  if (!begin || !writes) return undefined;
  const readBack = inside.find(
    (hop) => hop.kind === 'pg' && hop.start >= writes.start && hop.name.startsWith('select * from "rm_catalog"."products"'),
  );
  const length = (hop: Hop | undefined) => (hop ? hop.end - hop.start : undefined);
  const steps: [string, number | undefined][] = [
    ['the edge, until the command is sent', produce.start - write.start],
    ['the command produced (its round trip)', length(produce)],
    ['until the processor begins its transaction', first.start - produce.end],
    ...TRANSACTION.map((name, i): [string, number | undefined] => [
      `  ${name}${i === 1 ? ' (events, state)' : ''}`,
      length(transaction[i]),
    ]),
    ['  between them (the processor thread)', endTxn.end - first.start - transaction.reduce((sum, hop) => sum + (length(hop) ?? 0), 0)],
    ['until the projection begins (markers, fetch)', begin.start - endTxn.end],
    ['  begin, lock, checkpoints (Postgres)', length(begin)],
    ['  between them (the main thread)', writes.start - begin.end],
    ['  rows, checkpoints, commit (Postgres)', length(writes)],
    ['until the answer (notice, read-back, reply)', write.end - writes.end],
    ['  of it, the read-back (Postgres)', length(readBack)],
  ];
  return { steps, inside };
}

const found = writes.flatMap((write) => {
  const steps = stepsOf(write);
  return steps ? [{ write, ...steps }] : [];
});
const total = (write: Hop) => write.end - write.start;
console.log(`POST /products c=1: ${N} writes, ${(N / (figures?.seconds ?? 1)).toFixed(0)}/s, p50 ${figures?.p50.toFixed(1)} ms`);
console.log(`${found.length} of ${writes.length} writes with their steps found; the median of each step, ms:`);
const names = found[0]?.steps.map(([name]) => name) ?? [];
for (const [i, name] of names.entries()) {
  const values = found.flatMap(({ steps }) => (steps[i]?.[1] === undefined ? [] : [steps[i][1]])).sort((a, b) => a - b);
  const taken = values.length === found.length ? '' : `  (in ${values.length} of ${found.length} writes)`;
  console.log(`  ${name.padEnd(50)} ${values.length === 0 ? '     —' : percentile(values, 50).toFixed(2).padStart(6)}${taken}`);
}
const totals = found.map(({ write }) => total(write)).sort((a, b) => a - b);
console.log(`  ${'the write, at the service'.padEnd(50)} ${percentile(totals, 50).toFixed(2).padStart(6)}`);

const median = [...found].sort((a, b) => total(a.write) - total(b.write))[found.length >> 1];
if (median) {
  console.log(
    `\nthe median write (${total(median.write).toFixed(2)} ms), what the service sent or heard back meanwhile, ms from its first byte:`,
  );
  for (const hop of median.inside) {
    const from = (hop.start - median.write.start).toFixed(2).padStart(7);
    const to = (hop.end - median.write.start).toFixed(2).padStart(7);
    console.log(`  ${from} → ${to}  ${hop.thread.padEnd(6)} ${hop.kind.padEnd(5)} ${hop.name}`);
  }
}
console.log(`\n${brokerAgeAtStart}`);
