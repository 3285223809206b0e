import type { Logger } from './logger.ts';

type Level = 'error' | 'warn' | 'info';
type Seen = { last: number; suppressed: number };

/**
 * One line per failure kind per interval, with the count of those it held back: an outage repeats the same failure
 * hundreds of times a minute, and a stack trace per retry buries the one line an operator needs.
 */
export class ThrottledLog {
  private readonly seen = new Map<string, Seen>();

  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(log: Logger, intervalMs = 10_000, now: () => number = Date.now) {
    this.log = log;
    this.intervalMs = intervalMs;
    this.now = now;
  }

  write(level: Level, kind: string, fields: Record<string, unknown>, message: string): void {
    const at = this.now();
    const seen = this.seen.get(kind);
    if (seen && at - seen.last < this.intervalMs) {
      seen.suppressed++;
      return;
    }
    const repeated = seen?.suppressed ?? 0;
    this.seen.set(kind, { last: at, suppressed: 0 });
    this.log[level](repeated > 0 ? { ...fields, repeatedSinceLastLine: repeated } : fields, message);
  }
}

/** What makes two failures "the same kind": the error's class and its protocol type or code, without the details. */
export function failureKind(error: unknown): string {
  const e = rootCause(error) as { name?: string; type?: string; code?: string };
  return [e.name ?? 'Error', e.type ?? e.code ?? ''].join(':');
}

/**
 * The error at the bottom of a client's wrappers: each keeps what it wraps as `cause` or `originalError`, and a failure
 * after several attempts keeps each attempt's error (`errors`, the last one the latest).
 */
export function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 10; depth++) {
    const wrapper = current as { cause?: unknown; originalError?: unknown; errors?: unknown[] } | undefined;
    const next = wrapper?.cause ?? wrapper?.originalError ?? (Array.isArray(wrapper?.errors) ? wrapper.errors.at(-1) : undefined);
    if (!next || next === current) return current;
    current = next;
  }
  return current;
}

/** An error as one log field: name and message, with the stack only where a human will need it. */
export const errorField = (error: unknown): { name?: string; message: string; type?: string; code?: string } => {
  const e = rootCause(error) as { name?: string; message?: string; type?: string; code?: string };
  return { name: e.name, message: e.message ?? String(error), type: e.type, code: e.code };
};
