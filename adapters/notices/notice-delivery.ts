/** How a notice went: a failure to deliver is an answer, not an exception, so the caller records it and moves on. */
export type NoticeOutcome = {
  delivered: boolean;
  /** Attempts made (0 when the notice was refused or skipped before any). */
  attempts: number;
  /** The last HTTP status (webhook) or SMTP reply code (email) received, if any. */
  status?: number;
  /** Why it was not delivered (the last attempt's reason), or why it was skipped. */
  error?: string;
  /** Nothing was attempted because the channel is not configured (e.g. SMTP_URL unset). */
  skipped?: boolean;
};

export type Backoff = {
  /** The wait before the second attempt; it doubles for each next one. */
  baseMs: number;
  /** No wait is longer, whether computed or asked for by the receiver (Retry-After). */
  maxMs: number;
};

export const defaultBackoff: Backoff = { baseMs: 1_000, maxMs: 60_000 };

/**
 * The wait after failed attempt `attempt` (1-based): exponential, with "equal jitter" (half fixed, half random) so that
 * many senders retrying at once spread out but none retries sooner than half the schedule.
 */
export function backoffDelayMs(attempt: number, { baseMs, maxMs }: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or at once (false) when the signal aborts first. */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(slept);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

export const messageOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  // fetch's "fetch failed" hides the reason (ECONNREFUSED, a DNS failure) in its cause.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
};
