import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { MAX_PARTITIONS } from './group-commit.ts';
import { redactUrl, StartupError } from './startup-error.ts';

/** `host:port`, as kafkajs takes a broker (it splits at the colon: no IPv6 literals). */
const BROKER = /^([A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?):([0-9]{1,5})$/;

/** Why a KAFKA_BROKERS value is not a comma-separated list of host:port, or undefined when it is. */
export function brokersProblem(value: string): string | undefined {
  const entries = value.split(',').map((b) => b.trim());
  for (const entry of entries) {
    const match = BROKER.exec(entry);
    const port = match ? Number(match[3]) : NaN;
    if (!match || port < 1 || port > 65535) {
      return `expected a comma-separated list of host:port (e.g. 127.0.0.1:19092), and ${entry === '' ? 'an entry is empty' : `"${entry}" is not one`}`;
    }
  }
  return undefined;
}

/** Why a DATABASE_URL value is not a Postgres URL naming a database, or undefined when it is. */
export function databaseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'expected a URL such as postgres://user:password@127.0.0.1:5432/commerce_ledger';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return `expected a postgres:// or postgresql:// URL, not ${url.protocol}//`;
  if (!url.hostname) return 'expected a host, as in postgres://user@127.0.0.1:5432/commerce_ledger';
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-zA-Z0-9_]+$/.test(name)) {
    return name === ''
      ? 'expected a database name after the host (…:5432/commerce_ledger)'
      : `the database name "${name}" must be letters, digits and _`;
  }
  return undefined;
}

/** Settings whose values never appear in a message. */
const SECRETS = new Set([
  'AUTH_DEV_SECRET',
  'INTEGRATION_STATE_SECRET',
  'WEBHOOK_SECRET_KEY',
  'UNIFIED_API_TOKEN',
  'UNIFIED_WORKSPACE_SECRET',
  'FILE_URL_SECRET',
  'S3_SECRET_ACCESS_KEY',
]);

/** Where the filesystem object store writes when STORAGE_DIR is unset: `<repo>/.data/objects` (git-ignored). */
export const DEFAULT_STORAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.data', 'objects');

/** `http://HOST:PORT`, with a wildcard address read as this machine and an IPv6 literal in brackets. */
export function defaultPublicBaseUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** `NAME="value"` for a message: a secret's value is hidden, a URL's password masked, a long value cut. */
function shown(name: string, value: unknown): string {
  if (value === undefined) return `${name} (unset)`;
  if (SECRETS.has(name)) return `${name} (value hidden)`;
  const text = String(value);
  const safe = name.endsWith('_URL') ? redactUrl(text) : text;
  return `${name}=${JSON.stringify(safe.length > 200 ? `${safe.slice(0, 200)}…` : safe)}`;
}

/** The parts an instance may run; several instances of one namespace share the work by running different ones. */
export const SERVICE_ROLES = ['api', 'processors', 'projections', 'streams'] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  KAFKA_BROKERS: z
    .string()
    .default('127.0.0.1:19092')
    .superRefine((value, ctx) => {
      const problem = brokersProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  SCHEMA_REGISTRY_URL: z.string().url().default('http://127.0.0.1:18081/apis/ccompat/v7'),
  DATABASE_URL: z
    .string()
    .default('postgres://postgres@127.0.0.1:5432/commerce_ledger')
    .superRefine((value, ctx) => {
      const problem = databaseUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
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
  /**
   * Where the command processors keep aggregate snapshots: `lmdb` a local store under STATE_DIR (a cache of the state
   * changelogs: an assignment reads only their tail, and memory holds STATE_CACHE_SIZE parsed snapshots per
   * changelog), `memory` every snapshot in memory, each changelog read whole at each assignment.
   */
  STATE_STORE: z.enum(['lmdb', 'memory']).default('lmdb'),
  /** The state store's parent directory; each instance's store is `<STATE_DIR>/<namespace>-<PORT>` (deletable at any time while it is stopped). */
  STATE_DIR: z.string().min(1).default('.state'),
  STATE_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
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
  /**
   * What this instance runs (comma-separated, default all): `api` the HTTP API, `processors` the command processors
   * and event routers, `projections` the read models, `streams` the workers (push, order mapping, bulk, export, feed).
   * Health and metrics are always served.
   */
  SERVICE_ROLES: z
    .string()
    .default(SERVICE_ROLES.join(','))
    .transform((value, ctx) => {
      const named = value
        .split(',')
        .map((role) => role.trim())
        .filter((role) => role !== '');
      const unknown = named.filter((role) => !(SERVICE_ROLES as readonly string[]).includes(role));
      if (unknown.length > 0 || named.length === 0) {
        ctx.addIssue({ code: 'custom', message: `roles are ${SERVICE_ROLES.join(', ')} (comma-separated, at least one)` });
        return z.NEVER;
      }
      return new Set(named as ServiceRole[]) as ReadonlySet<ServiceRole>;
    }),
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
  /** Verifies Unified's native webhook deliveries (`sig256`); unset: they are refused (401). `npm start`'s stand-in sets it. */
  UNIFIED_WORKSPACE_SECRET: z.string().min(1).optional(),
  /**
   * Where the provider and the tenant's browser reach this service (webhook subscriptions, OAuth return, download links
   * of the filesystem store). Unset: `http://HOST:PORT`.
   */
  PUBLIC_BASE_URL: z.string().url().optional(),
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
  /** The SMTP server of export completion notices by email (credentials in the URL); unset: those are skipped, with a warning. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^/]/, 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587')
    .optional(),
  /** The From of those emails. */
  NOTICE_FROM: z.string().min(3).default('commerce-ledger <no-reply@localhost>'),
  /** Lets export notice webhooks reach loopback and private addresses (development, tests); by default public hosts only. */
  NOTICE_ALLOW_PRIVATE_NETWORKS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** The filesystem object store's directory (exports, catalog feeds), created on demand; used unless S3 is configured. */
  STORAGE_DIR: z.string().min(1).default(DEFAULT_STORAGE_DIR),
  /**
   * Keys the HMAC of the filesystem store's download links (GET /files/*). Unset: a fixed development key, with a
   * warning (links are then forgeable).
   */
  FILE_URL_SECRET: z.string().min(32).optional(),
  /** An S3-compatible service instead of the filesystem (S3_ENDPOINT or S3_BUCKET set); unset endpoint: AWS. */
  S3_ENDPOINT: z.string().url().optional(),
  /** Where clients reach the S3 service when the service itself reaches it by an internal name; download links are signed for it. */
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  /** Created on first use when missing; default `commerce-ledger`. */
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z, 0-9, . and -)')
    .optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Bucket in the path rather than the host name; default true when S3_ENDPOINT is set. */
  S3_FORCE_PATH_STYLE: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional(),
  /** The catalog feed is rebuilt once a tenant's changes have been quiet this long (docs/decisions.md "Catalog feed")… */
  FEED_QUIET_MS: z.coerce.number().int().min(0).default(1_000),
  /** …or this long after its first change not yet in the feed, whichever comes first. */
  FEED_MAX_DELAY_MS: z.coerce.number().int().min(0).default(5_000),
  /** How long the link GET /api/v1/ucp/catalog.json (and the JSON-lines sibling) redirects to stays valid. */
  FEED_LINK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(900),
  /** How long a catalog feed file no longer served is kept (at least FEED_LINK_SECONDS: a link handed out keeps working). */
  FEED_KEEP_REPLACED_SECONDS: z.coerce.number().int().min(0).default(3_600),
});

export type Config = Omit<z.infer<typeof configSchema>, 'PUBLIC_BASE_URL'> & { PUBLIC_BASE_URL: string };

/**
 * The settings from the environment; a value that does not parse throws a StartupError whose message is one line naming
 * each bad setting, the value tried (secrets hidden, passwords masked) and what was expected.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      return `${shown(name, env[name])}: ${issue.message}`;
    });
    throw new StartupError(`invalid configuration: ${problems.join('; ')}`);
  }
  if (!parsed.data.AUTH_JWKS_URL && !parsed.data.AUTH_DEV_SECRET) {
    throw new StartupError('invalid configuration: set AUTH_JWKS_URL (production) or AUTH_DEV_SECRET (development mode)');
  }
  const { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } = parsed.data;
  if ((S3_ACCESS_KEY_ID === undefined) !== (S3_SECRET_ACCESS_KEY === undefined)) {
    throw new StartupError('invalid configuration: set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither');
  }
  const { AUTH_JWKS_URL, FILE_URL_SECRET, S3_ENDPOINT, S3_BUCKET } = parsed.data;
  // Production authentication with the filesystem store's public development key would let anyone forge download links.
  if (AUTH_JWKS_URL && !FILE_URL_SECRET && !S3_ENDPOINT && !S3_BUCKET) {
    throw new StartupError(
      'invalid configuration: with AUTH_JWKS_URL (production) and the filesystem object store, set FILE_URL_SECRET (32 characters or more)',
    );
  }
  return { ...parsed.data, PUBLIC_BASE_URL: parsed.data.PUBLIC_BASE_URL ?? defaultPublicBaseUrl(parsed.data.HOST, parsed.data.PORT) };
}

export const kafkaBrokers = (config: Config): string[] => config.KAFKA_BROKERS.split(',').map((b) => b.trim());
