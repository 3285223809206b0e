import pino, { type Logger } from 'pino';

export type { Logger };

export const createLogger = (level: string, name = 'commerce-ledger'): Logger => pino({ name, level });
