// Single-node KRaft Kafka (combined broker+controller) as a detached JVM; jars resolved by Maven once.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { mavenClasspath } from '../maven-classpath.ts';
import { envPort, livePid, logsDir, portOpen, spawnDetached, stopProcess, waitUntil, type Log } from '../process-control.ts';

const run = promisify(execFile);
const POM = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pom.xml');
const MAIN_CLASS = 'kafka.Kafka';
const READY_TIMEOUT_MS = 90_000;

const kafkaDir = (stackDir: string): string => path.join(stackDir, 'kafka');
export const kafkaLogFile = (stackDir: string): string => path.join(logsDir(stackDir), 'kafka.log');
const consoleLogFile = (stackDir: string): string => path.join(logsDir(stackDir), 'kafka.console.log');

export function kafkaPorts(): { port: number; controllerPort: number } {
  return { port: envPort('KAFKA_PORT', 19092), controllerPort: envPort('KAFKA_CONTROLLER_PORT', 19093) };
}

/**
 * Where one broker lives and listens: the stack's own, or a test's private one. `stackDir` holds its
 * kafka/ (config, data), logs/ and run/ (pid file) as the stack's directory does; `jarsStackDir` is the
 * stack whose cached classpath it runs on, so every broker shares one Maven resolution.
 */
export type BrokerSite = { stackDir: string; port: number; controllerPort: number; jarsStackDir: string };

const stackBrokerSite = (stackDir: string): BrokerSite => ({ stackDir, ...kafkaPorts(), jarsStackDir: stackDir });

export async function describeKafka(brokers: string[]): Promise<{ clusterId: string; brokers: number } | undefined> {
  const admin = new Kafka({
    clientId: 'stack-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 ? { clusterId: cluster.clusterId, brokers: cluster.brokers.length } : undefined;
  } catch {
    return undefined;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Runtime classpath of the broker. */
const resolveClasspath = (stackDir: string, log: Log): Promise<string> =>
  mavenClasspath({ name: 'kafka', what: 'broker jars', pom: POM, dir: kafkaDir(stackDir), stackDir, log });

function writeConfig({ stackDir, port, controllerPort }: BrokerSite): { serverProps: string; log4jProps: string } {
  const dir = kafkaDir(stackDir);
  const slash = (p: string): string => p.replaceAll('\\', '/');
  const serverProps = path.join(dir, 'server.properties');
  const log4jProps = path.join(dir, 'log4j.properties');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    serverProps,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${slash(path.join(dir, 'data'))}`,
      'num.partitions=3',
      'auto.create.topics.enable=false',
      'group.initial.rebalance.delay.ms=0',
      'offsets.topic.replication.factor=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'min.insync.replicas=1',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    log4jProps,
    [
      'log4j.rootLogger=INFO, file',
      'log4j.appender.file=org.apache.log4j.RollingFileAppender',
      `log4j.appender.file.File=${slash(kafkaLogFile(stackDir))}`,
      'log4j.appender.file.MaxFileSize=20MB',
      'log4j.appender.file.MaxBackupIndex=2',
      'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
      'log4j.logger.kafka.request.logger=WARN',
      '',
    ].join('\n'),
  );
  return { serverProps, log4jProps };
}

/** Kafka's own Uuid format: 16 random bytes, base64url without padding, not starting with '-'. */
function clusterId(stackDir: string): string {
  const file = path.join(kafkaDir(stackDir), 'cluster-id');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  let id: string;
  do id = randomBytes(16).toString('base64url');
  while (id.startsWith('-'));
  fs.writeFileSync(file, `${id}\n`);
  return id;
}

/** The pid of the broker whose pid file is under `stackDir`, if it runs. */
export const brokerPid = (stackDir: string): number | undefined => livePid(stackDir, 'kafka', MAIN_CLASS);

/** Writes the broker's config, formats its storage on first use and spawns it detached; returns its pid. */
export async function spawnBroker(site: BrokerSite, log: Log): Promise<number> {
  const { stackDir } = site;
  const cp = await resolveClasspath(site.jarsStackDir, log);
  const { serverProps, log4jProps } = writeConfig(site);
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const jvmArgs = [`-Dlog4j.configuration=file:${log4jProps.replaceAll('\\', '/')}`, '-Djava.awt.headless=true', '-cp', cp];
  if (!fs.existsSync(path.join(kafkaDir(stackDir), 'data', 'meta.properties'))) {
    log('kafka: formatting KRaft storage');
    const id = clusterId(stackDir);
    await run(java, [...jvmArgs, 'kafka.tools.StorageTool', 'format', '-t', id, '-c', serverProps, '--ignore-formatted']).catch(
      (err: Error) => {
        throw new Error(`kafka: storage format failed: ${err.message}`);
      },
    );
  }
  log(`kafka: starting broker on 127.0.0.1:${site.port}`);
  return spawnDetached({
    stackDir,
    name: 'kafka',
    command: java,
    args: ['-Xmx1g', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', ...jvmArgs, MAIN_CLASS, serverProps],
    logFile: consoleLogFile(stackDir),
  });
}

/** Resolves once the broker at `site` answers a metadata request; fails early if `pid` dies. */
export async function waitForBroker(site: BrokerSite, pid: number | undefined, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const brokers = [`127.0.0.1:${site.port}`];
  await waitUntil('kafka', async () => (await portOpen(site.port)) && (await describeKafka(brokers)) !== undefined, {
    timeoutMs,
    pid,
    logFiles: [consoleLogFile(site.stackDir), kafkaLogFile(site.stackDir)],
  });
}

/** Returns the bootstrap brokers; starts a local broker unless KAFKA_BROKERS points elsewhere. */
export async function ensureKafka(stackDir: string, log: Log): Promise<string[]> {
  const external = process.env.KAFKA_BROKERS;
  if (external) {
    log(`kafka: external (KAFKA_BROKERS=${external})`);
    return external.split(',').map((b) => b.trim());
  }
  const site = stackBrokerSite(stackDir);
  const { port } = site;
  const brokers = [`127.0.0.1:${port}`];
  let pid = livePid(stackDir, 'kafka', MAIN_CLASS);

  if ((await portOpen(port)) && (await describeKafka(brokers))) {
    log(`kafka: already running on ${brokers[0]}${pid ? ` (pid ${pid})` : ' (not managed by this stack)'}`);
    return brokers;
  }
  if (pid === undefined) {
    if (await portOpen(port)) throw new Error(`kafka: port ${port} is taken by something that is not a Kafka broker`);
    pid = await spawnBroker(site, log);
  } else {
    log(`kafka: pid ${pid} is starting, waiting`);
  }
  await waitForBroker(site, pid);
  log(`kafka: ready on ${brokers[0]}`);
  return brokers;
}

/** SIGTERM (a controlled shutdown), SIGKILL after `timeoutMs`. */
export async function stopKafka(stackDir: string, log: Log, timeoutMs = 30_000): Promise<void> {
  const pid = await stopProcess(stackDir, 'kafka', MAIN_CLASS, { timeoutMs });
  if (pid) log(`kafka: stopped pid ${pid}`);
}

export async function kafkaStatus(stackDir: string): Promise<{ up: boolean; detail: string }> {
  const external = process.env.KAFKA_BROKERS;
  const brokers = external ? external.split(',') : [`127.0.0.1:${kafkaPorts().port}`];
  const info = await describeKafka(brokers);
  const pid = external ? undefined : livePid(stackDir, 'kafka', MAIN_CLASS);
  const where = `${brokers.join(',')}${external ? ' (external)' : pid ? ` pid ${pid}` : ''}`;
  return info
    ? { up: true, detail: `${where}, cluster ${info.clusterId}` }
    : { up: false, detail: `${where} not answering${pid ? `; see ${kafkaLogFile(stackDir)}` : ''}` };
}
