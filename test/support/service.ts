import { inject } from 'vitest';
import { startServiceProcess, type Service, type ServiceOptions } from './service-process.ts';

export { TEST_DEV_SECRET, uniqueName, type Service, type ServiceOptions } from './service-process.ts';

/** The service as its own process on the run's stack, with a database, topic namespace and port of its own. */
export const startService = (options: ServiceOptions = {}): Promise<Service> => startServiceProcess(inject('stack'), options);
