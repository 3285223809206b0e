import type { EventRoute } from '../ledger/event-router.ts';

/** Stream processors that turn events into commands for other aggregates; each runs as its own consumer group. */
export const eventRoutes: EventRoute[] = [];
