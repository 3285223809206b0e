// Apicurio Registry 3 (Confluent-compatible API at /apis/ccompat/v7), built by Maven from Maven Central
// artifacts (see pom.xml here for why it is 3.0.9 and how) and run as a plain JVM process.
//
// Storage: KafkaSQL on the stack's Kafka when brokers are given: the registry's state is an append-only
// journal topic (retention -1) replayed into an in-memory database at every start, so it is as durable
// as Kafka. Without brokers: SQL on an H2 file under <stackDir>/registry/h2/. Schema ids survive restarts
// either way. Auth, UI and telemetry are off; it listens on 127.0.0.1 only.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ccompatPath = '/apis/ccompat/v7';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP_DIR = path.join(HERE, 'server', 'target', 'quarkus-app');
const RUNNER_JAR = path.join(APP_DIR, 'quarkus-run.jar');
const INPUTS_HASH_FILE = path.join(APP_DIR, 'build-inputs.sha256');

/** Everything the build reads from this directory; a change to any of them triggers a rebuild. */
function buildInputs(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'target') walk(full);
      } else if (/\.(xml|pom|java|properties|config)$/.test(entry.name)) {
        files.push(full);
      }
    }
  };
  walk(HERE);
  return files.sort();
}

function inputsHash(): string {
  const hash = createHash('sha256');
  for (const file of buildInputs()) {
    hash.update(path.relative(HERE, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function javaCommand(): string {
  const javaHome = process.env.JAVA_HOME;
  if (javaHome) {
    const java = path.join(javaHome, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (fs.existsSync(java)) return java;
  }
  return 'java';
}

/**
 * Builds the runnable registry (server/target/quarkus-app/quarkus-run.jar) unless it exists and was built
 * from the current poms/sources. Maven output goes to <stackDir>/logs/registry-build.log.
 */
export async function prepareRegistry(stackDir: string, log: (m: string) => void): Promise<void> {
  const hash = inputsHash();
  if (fs.existsSync(RUNNER_JAR) && fs.existsSync(INPUTS_HASH_FILE) && fs.readFileSync(INPUTS_HASH_FILE, 'utf8').trim() === hash) {
    return;
  }
  const logsDir = path.join(stackDir, 'logs');
  fs.mkdirSync(logsDir, { recursive: true });
  const logFile = path.join(logsDir, 'registry-build.log');
  log(`registry: building Apicurio Registry with Maven (first run downloads ~240 MB into ~/.m2 and takes ~2 min; log: ${logFile})...`);
  const started = Date.now();
  const mvn = process.platform === 'win32' ? 'mvn.cmd' : 'mvn';
  const args = ['-B', '-f', path.join(HERE, 'pom.xml'), '-s', path.join(HERE, 'settings.xml'), 'clean', 'package'];
  const out = fs.openSync(logFile, 'w');
  let exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error };
  try {
    fs.writeSync(out, `$ ${mvn} ${args.join(' ')}\n`);
    exit = await new Promise((resolve) => {
      const child = spawn(mvn, args, { cwd: HERE, stdio: ['ignore', out, out] });
      child.on('error', (error) => resolve({ code: null, signal: null, error }));
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
  } finally {
    fs.closeSync(out);
  }
  if (exit.error || exit.code !== 0 || !fs.existsSync(RUNNER_JAR)) {
    const why = exit.error
      ? `could not run ${mvn}: ${exit.error.message}`
      : exit.code !== 0
        ? `mvn exited with ${exit.code ?? exit.signal}`
        : `mvn succeeded but ${RUNNER_JAR} is missing`;
    throw new Error(`registry: Apicurio Registry build failed (${why}); see ${logFile}`);
  }
  fs.writeFileSync(INPUTS_HASH_FILE, `${hash}\n`);
  log(`registry: built in ${Math.round((Date.now() - started) / 1000)}s`);
}

/** How to start the registry; nothing is created or checked here except its data directory. */
export function registryProcess(opts: { stackDir: string; port: number; kafkaBrokers: string[] }): {
  command: string;
  args: string[];
  env: Record<string, string>;
  healthUrl: string;
} {
  const dataDir = path.join(opts.stackDir, 'registry');
  const tmpDir = path.join(dataDir, 'tmp');
  fs.mkdirSync(tmpDir, { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'snapshots'), { recursive: true });
  const storage =
    opts.kafkaBrokers.length > 0
      ? [
          '-Dapicurio.storage.kind=kafkasql',
          `-Dapicurio.kafkasql.bootstrap.servers=${opts.kafkaBrokers.join(',')}`,
          // created on first start (replication factor = min(3, brokers), so 1 on the single-node stack);
          // the journal IS the registry's state, so it must never expire (broker default: 7 days)
          '-Dapicurio.kafkasql.topic=_apicurio-kafkasql-journal',
          '-Dapicurio.kafkasql.topic.retention.ms=-1',
          '-Dapicurio.kafkasql.snapshots.topic=_apicurio-kafkasql-snapshots',
          '-Dapicurio.events.kafka.topic=_apicurio-registry-events',
        ]
      : [
          '-Dapicurio.storage.kind=sql',
          '-Dapicurio.storage.sql.kind=h2',
          `-Dapicurio.datasource.url=jdbc:h2:file:${path.join(dataDir, 'h2', 'registry')}`,
          '-Dapicurio.datasource.jdbc.initial-size=1',
          '-Dapicurio.datasource.jdbc.min-size=1',
          '-Dapicurio.datasource.jdbc.max-size=10',
        ];
  return {
    command: javaCommand(),
    args: [
      '-Xms64m',
      '-Xmx512m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Djava.io.tmpdir=${tmpDir}`,
      `-Dquarkus.http.port=${opts.port}`,
      '-Dquarkus.http.host=127.0.0.1',
      // default global rule, enforced from the first start (configureRegistry also stores it, which is
      // what makes the ccompat GET /config report it)
      '-Dapicurio.rules.global.compatibility=BACKWARD',
      // like Confluent: a schema that differs only in formatting is the same schema (same id, no new version)
      '-Dapicurio.ccompat.use-canonical-hash=true',
      // KafkaSQL snapshots (only made on request: POST /apis/registry/v3/admin/snapshots) are files here,
      // referenced from the snapshots topic, so this must outlive restarts
      `-Dapicurio.storage.snapshot.location=${path.join(dataDir, 'snapshots')}`,
      `-Dapicurio.import.work-dir=${tmpDir}`,
      ...storage,
      '-jar',
      RUNNER_JAR,
    ],
    env: {},
    healthUrl: `http://127.0.0.1:${opts.port}/health/ready`,
  };
}

const CCOMPAT_HEADERS = { 'Content-Type': 'application/vnd.schemaregistry.v1+json', Accept: 'application/json' };

async function call(method: 'GET' | 'PUT', url: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: CCOMPAT_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`registry: ${method} ${url} -> ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const levelOf = (reply: unknown): string =>
  String((reply as { compatibilityLevel?: unknown } | undefined)?.compatibilityLevel ?? '').toUpperCase();

/**
 * Every ccompat subject (an artifact of the default group), page by page through the v3 API: the ccompat
 * GET /subjects answers at most 1000 (Apicurio's apicurio.ccompat.max-subjects), and a registry shared by test
 * namespaces holds more.
 */
async function allSubjects(root: string): Promise<string[]> {
  const subjects: string[] = [];
  for (let offset = 0; ;) {
    const page = (await call('GET', `${root}/apis/registry/v3/groups/default/artifacts?offset=${offset}&limit=500`)) as {
      artifacts: { artifactId: string }[];
      count: number;
    };
    subjects.push(...page.artifacts.map((a) => a.artifactId));
    offset += page.artifacts.length;
    if (page.artifacts.length === 0 || offset >= page.count) return subjects;
  }
}

/**
 * Idempotently makes BACKWARD the global compatibility level of the Confluent-compatible API.
 * `baseUrl` is the registry root (http://127.0.0.1:18081) or the ccompat URL (.../apis/ccompat/v7).
 *
 * Also gives every existing subject that has no compatibility level of its own an explicit BACKWARD:
 * Apicurio answers GET /config/{subject} for such a subject with NONE (the global level only with
 * ?defaultToGlobal=true), and @kafkajs/confluent-schema-registry's register() then refuses it
 * ("Compatibility does not match the configuration (BACKWARD != NONE)"). Subjects first registered by
 * that library get their level from it; this covers subjects created any other way (curl, a client
 * that died between its register and its PUT /config/{subject}, ...). Explicit levels are left alone,
 * except NONE: Apicurio stores a subject-level NONE as "no rule", so such a subject gets BACKWARD too.
 */
export async function configureRegistry(baseUrl: string): Promise<void> {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const ccompat = trimmed.endsWith(ccompatPath) ? trimmed : trimmed + ccompatPath;
  const root = ccompat.slice(0, -ccompatPath.length);

  if (levelOf(await call('GET', `${ccompat}/config`)) !== 'BACKWARD') {
    await call('PUT', `${ccompat}/config`, { compatibility: 'BACKWARD' });
    const now = levelOf(await call('GET', `${ccompat}/config`));
    if (now !== 'BACKWARD') throw new Error(`registry: global compatibility is ${now} after PUT ${ccompat}/config`);
  }

  for (const subject of await allSubjects(root)) {
    const id = encodeURIComponent(subject);
    // ccompat subjects are artifacts of the default group; [] = no rule of its own
    const rules = (await call('GET', `${root}/apis/registry/v3/groups/default/artifacts/${id}/rules`)) as string[];
    if (!rules.includes('COMPATIBILITY')) await call('PUT', `${ccompat}/config/${id}`, { compatibility: 'BACKWARD' });
  }
}
