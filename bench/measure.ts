/** Throughput and latency of `count` operations run `concurrency` at a time. */
export type Figures = { name: string; count: number; seconds: number; p50: number; p99: number };

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function measure(name: string, count: number, concurrency: number, once: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await once(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, count, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

export const opsPerSecond = (f: Figures) => f.count / f.seconds;

export const printFigures = (rows: Figures[]) => {
  console.log(`${'measurement'.padEnd(58)} ${'ops'.padStart(6)} ${'ops/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(58)} ${String(r.count).padStart(6)} ${opsPerSecond(r).toFixed(0).padStart(8)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)}`,
    );
  }
};

export async function expectStatus(response: Promise<Response>, status: number): Promise<void> {
  const r = await response;
  await r.arrayBuffer();
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}`);
}
