// KRaft Kafka as detached JVMs, each node a combined broker+controller: one node, or a cluster of three (KAFKA_NODES=3);
// jars resolved by Maven once.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { quietKafka, type Admin } from '../../ledger/kafka.ts';
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
 * stack whose cached classpath it runs on, so every broker shares one Maven resolution. A node of a cluster
 * also names its id, every node's controller port (the KRaft quorum) and the cluster id they were formatted with.
 */
export type BrokerSite = {
  stackDir: string;
  port: number;
  controllerPort: number;
  jarsStackDir: string;
  cluster?: { nodeId: number; controllerPorts: number[]; clusterId: string };
};

/** How many Kafka nodes the local stack runs: 1, or 3 for a cluster that holds replication 3 and min.insync 2. */
export function kafkaNodes(): 1 | 3 {
  const nodes = process.env.KAFKA_NODES ?? '1';
  if (nodes !== '1' && nodes !== '3') throw new Error(`KAFKA_NODES must be 1 or 3, not "${nodes}"`);
  return nodes === '3' ? 3 : 1;
}

/**
 * The stack's broker sites: its one node in `<stack>/kafka`, or a cluster's nodes in `<stack>/kafka-cluster/node-<id>`
 * on every other port from KAFKA_PORT (broker) and KAFKA_CONTROLLER_PORT (controller): 19092/19093, 19094/19095, ….
 */
export function stackBrokerSites(stackDir: string): BrokerSite[] {
  const { port, controllerPort } = kafkaPorts();
  if (kafkaNodes() === 1) return [{ stackDir, port, controllerPort, jarsStackDir: stackDir }];
  return clusterSites({
    dir: path.join(stackDir, 'kafka-cluster'),
    ports: [0, 1, 2].map((i) => ({ port: port + 2 * i, controllerPort: controllerPort + 2 * i })),
    jarsStackDir: stackDir,
  });
}

/** The sites of a cluster whose nodes live in `<dir>/node-<id>`: one quorum, one cluster id (kept in `<dir>/cluster-id`). */
export function clusterSites({
  dir,
  ports,
  jarsStackDir,
}: {
  dir: string;
  ports: { port: number; controllerPort: number }[];
  jarsStackDir: string;
}): BrokerSite[] {
  fs.mkdirSync(dir, { recursive: true });
  const id = clusterId(dir);
  const controllerPorts = ports.map((p) => p.controllerPort);
  return ports.map((p, i) => ({
    stackDir: path.join(dir, `node-${i + 1}`),
    ...p,
    jarsStackDir,
    cluster: { nodeId: i + 1, controllerPorts, clusterId: id },
  }));
}

/** `question` put to the cluster by a short-lived admin client; undefined when no broker answers. */
async function askKafka<T>(brokers: string[], question: (admin: Admin) => Promise<T | undefined>): Promise<T | undefined> {
  const admin = quietKafka(brokers, 'stack-probe', { probe: { requestTimeoutMs: 3_000 } }).admin();
  try {
    await admin.connect();
    return await question(admin);
  } catch {
    return undefined;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export const describeKafka = (brokers: string[]): Promise<{ clusterId: string; brokers: number } | undefined> =>
  askKafka(brokers, async (admin) => {
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 ? { clusterId: cluster.clusterId, brokers: cluster.brokers.length } : undefined;
  });

/**
 * The partitions of the cluster (internal topics included) whose in-sync replicas are fewer than their replicas, or
 * undefined when no broker answers. An operator restarts the next broker of a rolling restart only once this is empty.
 */
export const underReplicatedPartitions = (brokers: string[]): Promise<string[] | undefined> =>
  askKafka(brokers, async (admin) => {
    const names = [...new Set([...(await admin.listTopics()), '__consumer_offsets', '__transaction_state'])];
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    return topics.flatMap(({ name, partitions }) =>
      partitions.filter(({ replicas, isr }) => isr.length < replicas.length).map(({ partitionId }) => `${name}[${partitionId}]`),
    );
  });

/** Runtime classpath of the broker. */
const resolveClasspath = (stackDir: string, log: Log): Promise<string> =>
  mavenClasspath({ name: 'kafka', what: 'broker jars', pom: POM, dir: kafkaDir(stackDir), stackDir, log });

function writeConfig({ stackDir, port, controllerPort, cluster }: BrokerSite): { serverProps: string; log4jProps: string } {
  const dir = kafkaDir(stackDir);
  const slash = (p: string): string => p.replaceAll('\\', '/');
  const serverProps = path.join(dir, 'server.properties');
  const log4jProps = path.join(dir, 'log4j.properties');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    serverProps,
    [
      'process.roles=broker,controller',
      `node.id=${cluster?.nodeId ?? 1}`,
      `controller.quorum.voters=${(cluster?.controllerPorts ?? [controllerPort]).map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',')}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${slash(path.join(dir, 'data'))}`,
      'num.partitions=3',
      'auto.create.topics.enable=false',
      'group.initial.rebalance.delay.ms=0',
      ...replicationSettings(cluster ? cluster.controllerPorts.length : 1),
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

/**
 * What a cluster of `nodes` holds: the internal topics (offsets, transactions) and the default for new topics on
 * every node (3 and 2 in a cluster of three: one node may be away without refusing a write), 1 on a single node.
 */
function replicationSettings(nodes: number): string[] {
  const factor = Math.min(nodes, 3);
  const minIsr = Math.max(1, factor - 1);
  return [
    `offsets.topic.replication.factor=${factor}`,
    `transaction.state.log.replication.factor=${factor}`,
    `transaction.state.log.min.isr=${minIsr}`,
    `default.replication.factor=${factor}`,
    `min.insync.replicas=${minIsr}`,
  ];
}

/** Kafka's own Uuid format: 16 random bytes, base64url without padding, not starting with '-'. */
function clusterId(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'cluster-id');
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
    const id = site.cluster?.clusterId ?? clusterId(kafkaDir(stackDir));
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

/** Returns the bootstrap brokers; starts the local node(s) (KAFKA_NODES) unless KAFKA_BROKERS points elsewhere. */
export async function ensureKafka(stackDir: string, log: Log): Promise<string[]> {
  const external = process.env.KAFKA_BROKERS;
  if (external) {
    log(`kafka: external (KAFKA_BROKERS=${external})`);
    return external.split(',').map((b) => b.trim());
  }
  const sites = stackBrokerSites(stackDir);
  const brokers = sites.map((site) => `127.0.0.1:${site.port}`);
  const running = (await portOpen(sites[0]!.port)) ? await describeKafka(brokers) : undefined;
  if (running && running.brokers !== sites.length) {
    throw new Error(
      `kafka: a cluster of ${running.brokers} node(s) runs on ${brokers[0]}, KAFKA_NODES asks for ${sites.length}: stop the stack first (npm run stack:down)`,
    );
  }
  if (running) {
    log(`kafka: already running on ${brokers.join(',')}`);
    return brokers;
  }
  // The nodes of a cluster start together (each waits for a quorum of controllers before it answers), on jars resolved once.
  await resolveClasspath(sites[0]!.jarsStackDir, log);
  await Promise.all(
    sites.map(async (site) => {
      let pid = brokerPid(site.stackDir);
      if (pid === undefined) {
        if (await portOpen(site.port)) throw new Error(`kafka: port ${site.port} is taken by something that is not a Kafka broker`);
        pid = await spawnBroker(site, log);
      } else {
        log(`kafka: pid ${pid} is starting, waiting`);
      }
      await waitForBroker(site, pid);
    }),
  );
  if (sites.length > 1)
    await waitUntil('kafka cluster', async () => (await describeKafka(brokers))?.brokers === sites.length, { timeoutMs: READY_TIMEOUT_MS });
  log(`kafka: ready on ${brokers.join(',')}`);
  return brokers;
}

/** SIGTERM (a controlled shutdown), SIGKILL after `timeoutMs`; every node the stack may have started. */
export async function stopKafka(stackDir: string, log: Log, timeoutMs = 30_000): Promise<void> {
  const nodes = [stackDir, ...clusterNodeDirs(stackDir)];
  await Promise.all(
    nodes.map(async (dir) => {
      const pid = await stopProcess(dir, 'kafka', MAIN_CLASS, { timeoutMs });
      if (pid) log(`kafka: stopped pid ${pid}`);
    }),
  );
}

/** SIGKILL to the node under `stackDir`: its loss, as a crash would have it; resolves once it is gone. */
export async function killKafka(stackDir: string, log: Log): Promise<void> {
  const pid = await stopProcess(stackDir, 'kafka', MAIN_CLASS, { signal: 'SIGKILL', timeoutMs: 10_000 });
  if (pid) log(`kafka: killed pid ${pid}`);
}

/** The node directories of the stack's cluster, if it ever ran one. */
function clusterNodeDirs(stackDir: string): string[] {
  const dir = path.join(stackDir, 'kafka-cluster');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.startsWith('node-'))
    .map((name) => path.join(dir, name));
}

export async function kafkaStatus(stackDir: string): Promise<{ up: boolean; detail: string }> {
  const external = process.env.KAFKA_BROKERS;
  const sites = external ? [] : stackBrokerSites(stackDir);
  const brokers = external ? external.split(',') : sites.map((site) => `127.0.0.1:${site.port}`);
  const info = await describeKafka(brokers);
  const pids = sites.flatMap((site) => brokerPid(site.stackDir) ?? []);
  const where = `${brokers.join(',')}${external ? ' (external)' : pids.length ? ` pid ${pids.join(',')}` : ''}`;
  return info
    ? { up: true, detail: `${where}, cluster ${info.clusterId} of ${info.brokers} node(s)` }
    : { up: false, detail: `${where} not answering${pids.length ? `; see ${kafkaLogFile(sites[0]!.stackDir)}` : ''}` };
}
