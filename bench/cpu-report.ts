import { CLOCK_TICKS_PER_SECOND, cpuBetween, type CpuReading } from './cpu.ts';
import type { Figures } from './measure.ts';

/** The processes a CPU figure is read from, in the order they are printed. */
export const columns = ['bench', 'baseline', 'service', 'kafka', 'postgres', 'pg: run db', 'registry', 'others'] as const;
export type Column = (typeof columns)[number];

/** A measured phase: `involved` are the processes doing the work measured; their sum is the figure. */
export type Phase = Figures & { cpu: CpuReading; involved: Column[] };

/** The phases of a bench timed by hand (no latencies): `record` adds one from the CPU read before and after it. */
export function phaseLog() {
  const phases: Phase[] = [];
  const record = (name: string, count: number, seconds: number, before: CpuReading, after: CpuReading, involved: Column[]): Phase => {
    const phase: Phase = { name, count, seconds, p50: NaN, p99: NaN, cpu: withOthers(cpuBetween(before, after)), involved };
    phases.push(phase);
    return phase;
  };
  return { phases, record };
}

/** The rest of the machine: its busy time less every process measured here (`pg: run db` is part of `postgres`). */
export function withOthers(cpu: CpuReading): CpuReading {
  const machine = cpu.machine;
  if (machine === undefined) return { ...cpu, others: undefined };
  const measured = ['bench', 'baseline', 'service', 'kafka', 'postgres', 'registry'].reduce((sum, name) => sum + (cpu[name] ?? 0), 0);
  return { ...cpu, others: machine - measured };
}

export const sumOf = (phase: Phase): number | undefined =>
  phase.involved.some((name) => phase.cpu[name] === undefined)
    ? undefined
    : phase.involved.reduce((sum, name) => sum + (phase.cpu[name] ?? 0), 0) / phase.count;

const cell = (value: number | undefined, involved: boolean) => {
  const shown = value === undefined ? '-' : value.toFixed(2);
  return (involved ? shown : `(${shown})`).padStart(11);
};

export function printCpu(phases: Phase[]): void {
  console.log(
    `\nCPU per operation, ms, by process (utime+stime from /proc, USER_HZ=${CLOCK_TICKS_PER_SECOND}); ` +
      `the sum is over the processes doing the work, the others are in parentheses`,
  );
  console.log(`${'measurement'.padEnd(58)}${columns.map((c) => c.padStart(11)).join('')}${'sum'.padStart(9)}`);
  for (const phase of phases) {
    const values = columns.map((c) =>
      cell(phase.cpu[c] === undefined ? undefined : phase.cpu[c] / phase.count, phase.involved.includes(c)),
    );
    const sum = sumOf(phase);
    console.log(`${phase.name.padEnd(58)}${values.join('')}${(sum === undefined ? '-' : sum.toFixed(2)).padStart(9)}`);
  }
}

/** % of one core over `seconds`. */
export const percentOfCore = (ms: number | undefined, seconds: number) =>
  ms === undefined ? '-' : `${((ms / (seconds * 1000)) * 100).toFixed(1)} %`;
