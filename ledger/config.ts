import { z } from 'zod';
import { MAX_PARTITIONS } from './group-commit.ts';
import { redactUrl, StartupError } from './startup-error.ts';

/** `host:port`, as the Kafka client takes a broker (split at the colon: no IPv6 literals). */
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

/**
 * A group of settings read from the environment: their zod schemas by variable name, and which of them are secrets
 * (never shown in a message). Each module owns its group; the service's configuration (config.ts) composes them.
 */
export type Settings<Shape extends z.ZodRawShape> = { shape: Shape; secrets: readonly (keyof Shape & string)[] };

export const defineSettings = <Shape extends z.ZodRawShape>(
  shape: Shape,
  secrets: readonly (keyof Shape & string)[] = [],
): Settings<Shape> => ({
  shape,
  secrets,
});

/** `NAME="value"` for a message: a secret's value is hidden, a URL's password masked, a long value cut. */
function shown(name: string, value: unknown, secrets: ReadonlySet<string>): string {
  if (value === undefined) return `${name} (unset)`;
  if (secrets.has(name)) return `${name} (value hidden)`;
  const text = String(value);
  const safe = name.endsWith('_URL') ? redactUrl(text) : text;
  return `${name}=${JSON.stringify(safe.length > 200 ? `${safe.slice(0, 200)}…` : safe)}`;
}

/**
 * The settings of `shape` from the environment; a value that does not parse throws a StartupError whose message is one
 * line naming each bad setting, the value tried (secrets hidden, passwords masked) and what was expected.
 */
export function parseSettings<Shape extends z.ZodRawShape>(
  shape: Shape,
  secrets: readonly string[],
  env: NodeJS.ProcessEnv,
): z.infer<z.ZodObject<Shape>> {
  const parsed = z.object(shape).safeParse(env);
  if (!parsed.success) {
    const hidden = new Set(secrets);
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      return `${shown(name, env[name], hidden)}: ${issue.message}`;
    });
    throw new StartupError(`invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** The parts an instance may run; several instances of one namespace share the work by running different ones. */
export const SERVICE_ROLES = ['api', 'processors', 'projections', 'streams'] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];

/** What the ledger runtime needs: where it listens, Kafka, the registry, Postgres, the namespace, its limits and state. */
export const ledgerSettings = defineSettings({
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
  /**
   * Copies of each partition of the topics the service creates, and how many must hold a write before it is
   * acknowledged (producers write with acks=all). Unset: 3 and 2 on a cluster of three or more brokers, 1 and 1 on one.
   * Existing topics below them stop the start with the list (ledger/topic-replication.ts).
   */
  TOPIC_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(7).optional(),
  TOPIC_MIN_INSYNC_REPLICAS: z.coerce.number().int().min(1).max(7).optional(),
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
  STATE_CACHE_SIZE: z.coerce.number().int().min(0).default(1_000),
  /**
   * How far each V8 heap may grow past what its last full collection found live before the next (ledger/heap-growth.ts;
   * 0: V8's own factor).
   */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(1_000).default(100),
  /**
   * What identifies this instance among the service's (`<hostname>-<PORT>` when unset): the static member id of each
   * of its consumer groups and part of its transactional ids. Stable across restarts of the same instance, so a restart
   * takes its partitions back at once; two running instances must never share it.
   */
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,200}$/, 'letters, digits, dot, underscore and dash (at most 200)')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
});

export type LedgerConfig = z.infer<z.ZodObject<typeof ledgerSettings.shape>>;
