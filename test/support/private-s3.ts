import fs from 'node:fs';
import { freePorts } from '../../stack/process-control.ts';
import { s3EndpointOf, s3ProxyPid, spawnS3Proxy, stopS3, waitForS3Proxy, type S3Site } from '../../stack/s3/s3proxy.ts';
import { stackDir } from '../../stack/stack.ts';
import { claimPrivateDir } from './private-dir.ts';

export type PrivateS3 = {
  endpoint: string;
  /** `.stack/private/<name>-<random>`: s3/ (properties, data), logs/s3proxy.log, run/. */
  dir: string;
  /** SIGTERM, SIGKILL after a bound; resolves once the JVM is gone. */
  stop: () => Promise<void>;
  /** The same port and data; resolves once it answers. */
  start: () => Promise<void>;
  /** Stops it and removes its directory. */
  destroy: () => Promise<void>;
};

/** An S3Proxy of the test's own on a free port, with the stack's jar and credentials. Call `destroy()` in afterAll. */
export async function startPrivateS3(name = 's3'): Promise<PrivateS3> {
  const dir = await claimPrivateDir(name);
  const [port] = await freePorts(1);
  const site: S3Site = { stackDir: dir, port: port!, jarsStackDir: stackDir() };
  const log = (message: string): void => console.log(`[private ${name}] ${message}`);

  const start = async (): Promise<void> => {
    const pid = s3ProxyPid(dir) ?? (await spawnS3Proxy(site, log));
    await waitForS3Proxy(site, pid);
  };
  const stop = (): Promise<void> => stopS3(dir, log, 10_000);
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
  return { endpoint: s3EndpointOf(port!), dir, stop, start, destroy };
}
