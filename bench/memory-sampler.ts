import { appendFileSync } from 'node:fs';
import { memoryKb } from './seed.ts';

/** One look at the service's memory, in MB: /proc's RSS by kind and each thread's V8 heap from GET /metrics. */
export type MemorySample = {
  atS: number;
  rss: number;
  anon: number;
  file: number;
  mainUsed: number;
  mainTotal: number;
  external: number;
  processorUsed: number;
  processorTotal: number;
  processorExternal: number;
};

const MB = 1024 * 1024;
const metric = (text: string, line: string): number => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) / MB : Number.NaN;
};

/**
 * Samples the service every `everyMs` until stopped: the sample at the peak RSS (what the peak is made of) and the
 * peak of each part on its own. The heaps come from /metrics (the main thread's default metrics, the processor thread's
 * `ledger_processor_thread_heap_bytes`); RssFile is mostly the state store's mapped pages. BENCH_MEMORY_LOG names a file
 * to append every sample to (a JSON line each).
 */
export function memorySampler(baseUrl: string, pid: () => number | undefined, everyMs = 1_000) {
  const started = performance.now();
  const samples: MemorySample[] = [];
  let busy = false;
  const take = async () => {
    if (busy) return;
    busy = true;
    try {
      const text = await (await fetch(`${baseUrl}/metrics`)).text();
      const kb = (field: 'VmRSS' | 'RssAnon' | 'RssFile') => (memoryKb(pid(), field) ?? Number.NaN) / 1024;
      const sample: MemorySample = {
        atS: (performance.now() - started) / 1000,
        rss: kb('VmRSS'),
        anon: kb('RssAnon'),
        file: kb('RssFile'),
        mainUsed: metric(text, 'nodejs_heap_size_used_bytes'),
        mainTotal: metric(text, 'nodejs_heap_size_total_bytes'),
        external: metric(text, 'nodejs_external_memory_bytes'),
        processorUsed: metric(text, 'ledger_processor_thread_heap_bytes{kind="used"}'),
        processorTotal: metric(text, 'ledger_processor_thread_heap_bytes{kind="total"}'),
        processorExternal: metric(text, 'ledger_processor_thread_heap_bytes{kind="external"}'),
      };
      samples.push(sample);
      // Every sample as a JSON line, for a timeline.
      if (process.env.BENCH_MEMORY_LOG) appendFileSync(process.env.BENCH_MEMORY_LOG, `${JSON.stringify(sample)}\n`);
    } catch {
      // a scrape that fails (the service busy past its timeout) is one sample fewer
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void take(), everyMs);
  return {
    stop(): string {
      clearInterval(timer);
      if (samples.length === 0) return 'no memory sample';
      const f = (n: number) => n.toFixed(0);
      const describe = (s: MemorySample) =>
        `RSS ${f(s.rss)} MB (anon ${f(s.anon)}, file ${f(s.file)}); main heap ${f(s.mainUsed)} used / ${f(s.mainTotal)} total, ` +
        `external ${f(s.external)}; processor thread heap ${f(s.processorUsed)} / ${f(s.processorTotal)}, external ${f(s.processorExternal)}`;
      const at = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
      const peak = (key: keyof MemorySample) => f(Math.max(...samples.map((s) => s[key])));
      return (
        `at the peak (${at.atS.toFixed(0)} s): ${describe(at)}\n` +
        `    peaks apart: anon ${peak('anon')}, file ${peak('file')}, main heap total ${peak('mainTotal')}, external ${peak('external')}, ` +
        `processor heap total ${peak('processorTotal')} MB (${samples.length} samples, every ${everyMs} ms)`
      );
    },
  };
}
