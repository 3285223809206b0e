import { z } from 'zod';
import { MAX_PARTITIONS } from './group-commit.ts';

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  KAFKA_BROKERS: z.string().default('127.0.0.1:19092'),
  SCHEMA_REGISTRY_URL: z.string().url().default('http://127.0.0.1:18081/apis/ccompat/v7'),
  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/commerce_ledger'),
  /** Prefixes every topic and consumer group; lets test runs and local dev share one broker. */
  LEDGER_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9-]*$/)
    .default(''),
  TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(MAX_PARTITIONS).default(3),
  /** The most one Kafka record (and one topic's records in one transaction) may weigh; topics are created to take it. */
  RECORD_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(16_384)
    .max(64 * 1024 * 1024)
    .default(1_000_000),
  COMMAND_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  AUTH_JWKS_URL: z.string().url().optional(),
  AUTH_ISSUER: z.string().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  AUTH_DEV_SECRET: z.string().min(16).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /** Runs the command processors and event routers in a worker thread of their own (a second core), not on the edge's loop. */
  PROCESSORS_IN_THREAD: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  /** The most items one bulk job may hold. */
  BULK_MAX_ITEMS: z.coerce.number().int().min(1).default(100_000),
  /** The body limit of POST /api/v1/pim/bulk-jobs alone (the others keep BODY_LIMIT_BYTES): a full-size import fits. */
  BULK_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** The connection provider (a Unified.to-style API); the default is where `npm start` runs the stand-in (stack/unified). */
  UNIFIED_API_URL: z.string().url().default('http://127.0.0.1:18090'),
  UNIFIED_API_TOKEN: z.string().default('dev-unified-token'),
  UNIFIED_WORKSPACE_ID: z.string().default('dev-workspace'),
  /** Where the provider and the tenant's browser reach this service (webhook subscriptions, OAuth return). */
  PUBLIC_BASE_URL: z.string().url().default('http://127.0.0.1:3000'),
  /** Signs the OAuth `state`; a random one per process when unset (states then do not survive a restart). */
  INTEGRATION_STATE_SECRET: z.string().min(16).optional(),
  /** How long one call to the provider may take before it counts as a timeout. */
  UNIFIED_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** How long a product push claimed by a worker is left alone before it may be tried again (covers a crash mid-push). */
  PUSH_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),
  /** Calls in flight to one connection at most. */
  PUSH_PER_CONNECTION: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Derives every tenant's inbound webhook secret (commands/integrations/webhook-secret.ts). Production must set it and
   * keep it stable: changing it changes every tenant's secret at once. Unset: a fixed development key, with a warning.
   */
  WEBHOOK_SECRET_KEY: z.string().min(32).optional(),
  /** How long a rotated-away webhook secret is still accepted. */
  WEBHOOK_SECRET_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 60 * 60 * 1000),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  if (!parsed.data.AUTH_JWKS_URL && !parsed.data.AUTH_DEV_SECRET) {
    throw new Error('invalid configuration: set AUTH_JWKS_URL (production) or AUTH_DEV_SECRET (development mode)');
  }
  return parsed.data;
}

export const kafkaBrokers = (config: Config): string[] => config.KAFKA_BROKERS.split(',').map((b) => b.trim());
