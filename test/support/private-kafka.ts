import fs from 'node:fs';
import { brokerPid, spawnBroker, stopKafka, waitForBroker, type BrokerSite } from '../../stack/kafka/kafka.ts';
import { freePorts } from '../../stack/process-control.ts';
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
