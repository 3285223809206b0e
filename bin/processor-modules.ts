/** What the command processors and event routers run: read by bin/server.ts and by the processor thread alike. */
export { aggregates } from '../commands/index.ts';
export { eventRoutes as routes } from '../consumers/index.ts';
