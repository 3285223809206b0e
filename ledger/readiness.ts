import type { DependencyMonitor } from './dependencies.ts';
import type { Supervisor } from './supervisor.ts';

export type Check = { ok: boolean } & Record<string, unknown>;
export type Readiness = { ready: boolean; failing: string[]; checks: Record<string, Check> };

/** Readiness holds a projection back when it is this many events behind the end of its topics. */
export const READY_LAG_LIMIT = 10_000;
/** A part that failed this recently is not ready yet, even if it runs again: it may be failing in a loop. */
export const RECENT_FAILURE_MS = 10_000;

export type ReadinessSources = {
  dependencies: Pick<DependencyMonitor, 'checks'>;
  supervisors: readonly Pick<Supervisor, 'status'>[];
  listening: () => boolean;
  lags: readonly { projection: string; lagBehind: () => number }[];
};

/** Ready: every dependency reachable, every part running and not failed lately, progress heard, no projection far behind. */
export function readinessOf({ dependencies, supervisors, listening, lags }: ReadinessSources, now = Date.now()): Readiness {
  const checks: Record<string, Check> = { ...dependencies.checks() };
  for (const supervisor of supervisors) {
    const { name, state, restarts, lastFailureAt, lastError } = supervisor.status();
    checks[name] = {
      ok: state === 'running' && now - lastFailureAt > RECENT_FAILURE_MS,
      state,
      restarts,
      ...(lastFailureAt > 0 ? { lastFailureAt: new Date(lastFailureAt).toISOString(), lastError } : {}),
    };
  }
  checks['progress-listener'] = { ok: listening() };
  for (const { projection, lagBehind } of lags) {
    const lag = lagBehind();
    checks[`projection-${projection}-lag`] = { ok: lag <= READY_LAG_LIMIT, events: lag, limit: READY_LAG_LIMIT };
  }
  const failing = Object.entries(checks)
    .filter(([, check]) => !check.ok)
    .map(([name]) => name);
  return { ready: failing.length === 0, failing, checks };
}
