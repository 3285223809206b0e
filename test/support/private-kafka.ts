import fs from 'node:fs';
import {
  brokerPid,
  clusterSites,
  describeKafka,
  killKafka,
  spawnBroker,
  underReplicatedPartitions,
  stopKafka,
  waitForBroker,
  type BrokerSite,
} from '../../stack/kafka/kafka.ts';
import { freePorts, waitUntil } from '../../stack/process-control.ts';
import { stackDir } from '../../stack/stack.ts';
import { claimPrivateDir } from './private-dir.ts';

const START_TIMEOUT_MS = 90_000;
/** A controlled shutdown of a single-node KRaft broker takes a few seconds; past this it is killed. */
const STOP_TIMEOUT_MS = 15_000;

export type PrivateKafka = {
  brokers: string[];
  /** `.stack/private/<name>-<random>`: config, data, logs/ (kafka.log, kafka.console.log), run/. */
  dir: string;
  /** SIGTERM, SIGKILL after a bound; resolves once the JVM is gone. */
  stop: () => Promise<void>;
  /** The same ports and data directory, so the log survives; resolves once the broker answers metadata requests. */
  start: () => Promise<void>;
  /** Stops it and removes its directory. */
  destroy: () => Promise<void>;
};

/**
 * A single-node KRaft broker of the test's own, on free ports, with the stack's jars and settings.
 * Call `destroy()` in afterAll.
 */
export async function startPrivateKafka(name = 'kafka'): Promise<PrivateKafka> {
  const dir = await claimPrivateDir(name);
  const [port, controllerPort] = await freePorts(2);
  const site: BrokerSite = { stackDir: dir, port: port!, controllerPort: controllerPort!, jarsStackDir: stackDir() };
  const log = (message: string): void => console.log(`[private ${name}] ${message}`);

  const start = async (): Promise<void> => {
    const pid = brokerPid(dir) ?? (await spawnBroker(site, log));
    await waitForBroker(site, pid, START_TIMEOUT_MS);
  };
  const stop = (): Promise<void> => stopKafka(dir, log, STOP_TIMEOUT_MS);
  const destroy = async (): Promise<void> => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (error) {
    await destroy();
    throw error;
  }
  return { brokers: [`127.0.0.1:${port}`], dir, stop, start, destroy };
}

export type PrivateKafkaNode = {
  broker: string;
  /** A controlled shutdown (SIGTERM), SIGKILL after a bound; resolves once the JVM is gone. */
  stop: () => Promise<void>;
  /** SIGKILL at once: the node's loss, as a crash or a power cut would have it. */
  kill: () => Promise<void>;
  /** The same ports and data; resolves once the node answers metadata requests and the cluster counts it again. */
  start: () => Promise<void>;
};

export type PrivateKafkaCluster = {
  brokers: string[];
  dir: string;
  nodes: PrivateKafkaNode[];
  /** Resolves once every partition (internal topics included) has all its replicas in sync again. */
  inSync: () => Promise<void>;
  /** Kills every node and removes the directory, unless KEEP_PRIVATE_KAFKA is set (its brokers' logs, to read after a run). */
  destroy: () => Promise<void>;
};

/**
 * A three-node KRaft cluster of the test's own (each node broker and controller; replication 3, min.insync 2 as the
 * stack's cluster has them), on free ports, with the stack's jars. Call `destroy()` in afterAll.
 */
export async function startPrivateKafkaCluster(name = 'kafka-cluster', size = 3): Promise<PrivateKafkaCluster> {
  const dir = await claimPrivateDir(name);
  const ports = await freePorts(2 * size);
  const sites = clusterSites({
    dir,
    ports: Array.from({ length: size }, (_, i) => ({ port: ports[2 * i]!, controllerPort: ports[2 * i + 1]! })),
    jarsStackDir: stackDir(),
  });
  const brokers = sites.map((site) => `127.0.0.1:${site.port}`);
  const log = (message: string): void => console.log(`[private ${name}] ${message}`);
  const whole = () =>
    waitUntil(`${name}: every node in the cluster`, async () => (await describeKafka(brokers))?.brokers === size, {
      timeoutMs: START_TIMEOUT_MS,
    });

  const nodes = sites.map((site): PrivateKafkaNode => {
    const startNode = async (): Promise<void> => {
      const pid = brokerPid(site.stackDir) ?? (await spawnBroker(site, log));
      await waitForBroker(site, pid, START_TIMEOUT_MS);
    };
    return {
      broker: `127.0.0.1:${site.port}`,
      stop: () => stopKafka(site.stackDir, log, STOP_TIMEOUT_MS),
      kill: () => killKafka(site.stackDir, log),
      start: async () => {
        await startNode();
        await whole();
      },
    };
  });
  const destroy = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.kill()));
    if (!process.env.KEEP_PRIVATE_KAFKA) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      sites.map(async (site) => {
        const pid = brokerPid(site.stackDir) ?? (await spawnBroker(site, log));
        await waitForBroker(site, pid, START_TIMEOUT_MS);
      }),
    );
    await whole();
  } catch (error) {
    await destroy();
    throw error;
  }
  const inSync = () =>
    waitUntil(`${name}: every partition's replicas in sync`, async () => (await underReplicatedPartitions(brokers))?.length === 0, {
      timeoutMs: START_TIMEOUT_MS,
      intervalMs: 250,
    });
  return { brokers, dir, nodes, inSync, destroy };
}
