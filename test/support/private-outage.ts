import { setTimeout as sleep } from 'node:timers/promises';

/** One request as the client saw it. `status` 0: no answer (refused, reset, or past the client's deadline). */
export type Answer = {
  what: string;
  sentAt: number;
  answeredAt: number;
  status: number;
  code?: string;
  retryAfter: string | null;
  body: any;
  failure?: string;
};

export const isAcknowledged = (answer: Answer): boolean => answer.status >= 200 && answer.status < 300;

/** 503 with the API's one error body (README, Errors) and its `unavailable` code. */
export const isUnavailable = (answer: Answer): boolean =>
  answer.status === 503 &&
  answer.code === 'unavailable' &&
  typeof answer.body.error.message === 'string' &&
  Array.isArray(answer.body.error.details);

/** Sends one request and records what came back and when; never throws, never waits past `deadlineMs`. */
export async function timedRequest(
  baseUrl: string,
  request: { what: string; method: string; path: string; body?: unknown; headers?: Record<string, string>; deadlineMs: number },
): Promise<Answer> {
  const sentAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: { ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.deadlineMs),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text, so that a failure can show it
    }
    const code = typeof body?.error?.code === 'string' ? body.error.code : undefined;
    return {
      what: request.what,
      sentAt,
      answeredAt: Date.now(),
      status: response.status,
      code,
      retryAfter: response.headers.get('retry-after'),
      body,
    };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
    const failure =
      (error as Error).name === 'TimeoutError' ? `no answer within ${request.deadlineMs} ms` : (cause ?? (error as Error).message);
    return { what: request.what, sentAt, answeredAt: Date.now(), status: 0, retryAfter: null, body: null, failure };
  }
}

/** `Retry-After` is delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export const validRetryAfter = (value: string | null): boolean =>
  value !== null && (/^\d+$/.test(value.trim()) || !Number.isNaN(Date.parse(value)));

/** The moments of one outage, and where a request falls in it. */
export class OutageTimeline {
  stopping = Infinity;
  stopped = Infinity;
  starting = Infinity;
  back = Infinity;

  /** Stops the dependency, keeps it down for `downMs`, starts it again; marks each moment. */
  async outage(dependency: { stop: () => Promise<void>; start: () => Promise<void> }, downMs: number): Promise<void> {
    this.stopping = Date.now();
    await dependency.stop();
    this.stopped = Date.now();
    await sleep(downMs);
    this.starting = Date.now();
    await dependency.start();
    this.back = Date.now();
  }

  before = (answer: Answer): boolean => answer.sentAt < this.stopping;
  /** Sent after the dependency was gone and before it was started again: nothing can have reached it. */
  during = (answer: Answer): boolean => answer.sentAt >= this.stopped && answer.sentAt < this.starting;
  after = (answer: Answer): boolean => answer.sentAt >= this.back;

  /** For failure messages: the request, when it was sent relative to the outage, and its answer. */
  show = (answer: Answer): string => {
    const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    const t = answer.sentAt;
    const when =
      t < this.stopping
        ? `${seconds(this.stopping - t)} before the stop`
        : t < this.stopped
          ? 'while stopping'
          : t < this.starting
            ? `${seconds(t - this.stopped)} into the outage`
            : t < this.back
              ? 'while starting again'
              : `${seconds(t - this.back)} after the return`;
    const outcome =
      answer.status === 0
        ? answer.failure
        : `${answer.status} ${answer.code ?? (answer.status < 300 ? '' : JSON.stringify(answer.body)?.slice(0, 200))}`.trim();
    const retryAfter = answer.status === 503 ? `, Retry-After ${answer.retryAfter ?? 'missing'}` : '';
    return `${answer.what}, sent ${when}: ${outcome} in ${answer.answeredAt - answer.sentAt} ms${retryAfter}`;
  };
}

/**
 * Starts `send(i)` every `everyMs` without waiting for earlier ones (a client that keeps sending while the
 * service struggles), at most `max` times, until `enough()`; resolves with every answer once all have come back.
 */
export async function sendSteadily<T extends Answer>(
  send: (i: number) => Promise<T>,
  opts: { everyMs: number; max: number; enough: () => boolean },
): Promise<T[]> {
  const sent: Promise<T>[] = [];
  for (let i = 0; i < opts.max && !opts.enough(); i++) {
    sent.push(send(i));
    await sleep(opts.everyMs);
  }
  return Promise.all(sent);
}

/** Probes `/health/ready` and `/health/live` every `everyMs` until `enough()`; the arrays fill as answers come. */
export function probeHealth(
  baseUrl: string,
  opts: { everyMs: number; enough: () => boolean },
): { ready: Answer[]; live: Answer[]; finished: Promise<void> } {
  const ready: Answer[] = [];
  const live: Answer[] = [];
  const probe = (path: string): Promise<Answer> => timedRequest(baseUrl, { what: `GET ${path}`, method: 'GET', path, deadlineMs: 3_000 });
  const finished = (async () => {
    while (!opts.enough()) {
      const [r, l] = await Promise.all([probe('/health/ready'), probe('/health/live')]);
      ready.push(r);
      live.push(l);
      await sleep(opts.everyMs);
    }
  })();
  return { ready, live, finished };
}

/** Reads every `intervalMs` until `until` holds or `deadlineMs` passes; returns the last reading either way. */
export async function eventually<T>(
  read: () => Promise<T>,
  until: (value: T) => boolean,
  deadlineMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (until(value) || Date.now() > deadline) return value;
    await sleep(intervalMs);
  }
}

/** Each value that occurs more than once, with its count. */
export function repeated(values: string[]): Array<{ value: string; times: number }> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].filter(([, times]) => times > 1).map(([value, times]) => ({ value, times }));
}

/** How a set of requests was answered, e.g. "503 unavailable ×12, no answer within 17000 ms ×2". */
export function tally(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) {
    const key = a.status === 0 ? (a.failure ?? 'no answer') : `${a.status}${a.code ? ` ${a.code}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key} ×${n}`).join(', ') || 'none sent';
}

/** The first `n` lines and how many more: enough to see a pattern without a page per probe. */
export function firstOf(lines: string[], n = 5): string[] {
  return lines.length > n ? [...lines.slice(0, n), `… and ${lines.length - n} more`] : lines;
}
