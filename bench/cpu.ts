// CPU time by process, from Linux's /proc: utime + stime of /proc/<pid>/stat (every thread of the process), plus
// cutime + cstime (children that exited and were reaped). Readings are cumulative milliseconds since an arbitrary
// origin; only the difference of two readings means anything.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc's CPU times (100 on every Linux in practice). */
export const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
const msPerTick = 1000 / CLOCK_TICKS_PER_SECOND;

type ProcStat = { comm: string; ppid: number; ticks: number; childTicks: number; startTicks: number };

/** Undefined when the process is gone (or there is no /proc). */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: it ends at the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' '); // fields[0] is field 3 (state), so field n is fields[n - 3]
  const n = (field: number) => Number(fields[field - 3]);
  return { comm, ppid: n(4), ticks: n(14) + n(15), childTicks: n(16) + n(17), startTicks: n(22) };
}

/** How long a process has run and how much CPU it has spent so far (undefined when it is gone). */
export function processAge(pid: number): { seconds: number; cpuSeconds: number } | undefined {
  const stat = procStat(pid);
  if (!stat) return undefined;
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return { seconds: uptime - stat.startTicks / CLOCK_TICKS_PER_SECOND, cpuSeconds: stat.ticks / CLOCK_TICKS_PER_SECOND };
}

const allPids = (): number[] => {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
};

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** The first process whose command line contains `marker`, other than this one. */
export const findPid = (marker: string): number | undefined =>
  allPids().find((pid) => pid !== process.pid && cmdline(pid).includes(marker));

export type CpuSource = { name: string; read: () => number | undefined };
export type CpuReading = Record<string, number | undefined>;

/** One process (all its threads) and its reaped children. */
export const processCpu = (name: string, pid: () => number | undefined): CpuSource => ({
  name,
  read: () => {
    const p = pid();
    const stat = p === undefined ? undefined : procStat(p);
    return stat && (stat.ticks + stat.childTicks) * msPerTick;
  },
});

/**
 * Every process named `comm` (e.g. `postgres`: the postmaster, its background processes and every backend of every
 * database, whoever's). Summing ticks + reaped children's ticks over all of them counts a backend that exits between
 * two readings exactly once: while it lives in its own utime/stime, once reaped in the postmaster's cutime/cstime.
 */
export const commandCpu = (name: string, comm: string): CpuSource => ({
  name,
  read: () => {
    let ticks = 0;
    for (const pid of allPids()) {
      const stat = procStat(pid);
      if (stat?.comm === comm) ticks += stat.ticks + stat.childTicks;
    }
    return ticks * msPerTick;
  },
});

/** The whole machine's busy time (/proc/stat: user + nice + system + irq + softirq + steal), over all cores. */
export const machineCpu = (name: string): CpuSource => ({
  name,
  read: () => {
    try {
      const [user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
      return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * msPerTick;
    } catch {
      return undefined;
    }
  },
});

/**
 * The Postgres backends serving the given databases, told apart by their process title
 * (`postgres: <cluster>: <user> <database> <client> <activity>`). A backend's CPU goes to the postmaster when it
 * exits, where it can no longer be told apart, so a sampler reads them every `intervalMs`: a backend that exits
 * loses at most its last interval's CPU. A backend first seen after the tracker started counts from zero.
 */
export class DatabaseBackends {
  private readonly databases = new Set<string>();
  private readonly seen = new Map<number, { from: number; last: number }>();
  private readonly notOurs = new Set<number>();
  private readonly timer: NodeJS.Timeout;
  private scanned = false;

  constructor(intervalMs = 250) {
    this.timer = setInterval(() => this.scan(), intervalMs);
    this.timer.unref();
  }

  /** Add a database before its first connection, so that each of its backends is seen from its start. */
  watch(database: string): void {
    this.databases.add(database);
    this.notOurs.clear();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  source(name: string): CpuSource {
    return {
      name,
      read: () => {
        this.scan();
        let ticks = 0;
        for (const { from, last } of this.seen.values()) ticks += last - from;
        return ticks * msPerTick;
      },
    };
  }

  private scan(): void {
    for (const pid of allPids()) {
      if (this.notOurs.has(pid)) continue;
      const known = this.seen.get(pid);
      const stat = procStat(pid);
      if (!stat) continue;
      if (known) {
        known.last = stat.ticks;
        continue;
      }
      if (stat.comm !== 'postgres') {
        this.notOurs.add(pid);
        continue;
      }
      // A backend's title names its database once authenticated; until then look again at the next scan.
      if (
        !cmdline(pid)
          .split(' ')
          .some((word) => this.databases.has(word))
      )
        continue;
      this.seen.set(pid, { from: this.scanned ? 0 : stat.ticks, last: stat.ticks });
    }
    this.scanned = true;
  }
}

export const readCpu = (sources: CpuSource[]): CpuReading => Object.fromEntries(sources.map((s) => [s.name, s.read()]));

export const cpuBetween = (before: CpuReading, after: CpuReading): CpuReading =>
  Object.fromEntries(
    Object.keys(after).map((name) => {
      const a = after[name];
      const b = before[name];
      return [name, a === undefined || b === undefined ? undefined : a - b];
    }),
  );
