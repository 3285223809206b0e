import { hostname } from 'node:os';
import type { LedgerConfig } from './config.ts';

// Apart from the settings' zod schema (config.ts): the processor thread gets its settings parsed and never loads zod.

/** This instance's id among the service's: INSTANCE_ID, else `<hostname>-<PORT>` (unique on a host: ports are). */
export const instanceId = (config: Pick<LedgerConfig, 'INSTANCE_ID' | 'PORT'>): string =>
  config.INSTANCE_ID ?? `${hostname()}-${config.PORT}`;

export const kafkaBrokers = (config: Pick<LedgerConfig, 'KAFKA_BROKERS'>): string[] => config.KAFKA_BROKERS.split(',').map((b) => b.trim());
