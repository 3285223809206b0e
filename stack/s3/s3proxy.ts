// S3Proxy (org.gaul:s3proxy, its jar-with-dependencies from Maven Central) as a detached JVM: an S3-compatible server
// on jclouds' filesystem backend under <stackDir>/s3/data, checking SigV2/SigV4 signatures (presigned URLs included)
// against one fixed, public key pair. Listens on 127.0.0.1:S3_PORT (default 18082).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mavenClasspath } from '../maven-classpath.ts';
import { envPort, livePid, logsDir, portOpen, spawnDetached, stopProcess, waitUntil, type Log } from '../process-control.ts';

const POM = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pom.xml');
/** In S3Proxy's command line (the jar's path) and nobody else's. */
const MARKER = 's3proxy-';
const READY_TIMEOUT_MS = 60_000;

/** The local server's fixed credentials: development only, like the rest of the stack. */
export const S3PROXY_ACCESS_KEY_ID = 'local-identity';
export const S3PROXY_SECRET_ACCESS_KEY = 'local-credential';

const s3Dir = (stackDir: string): string => path.join(stackDir, 's3');
export const s3LogFile = (stackDir: string): string => path.join(logsDir(stackDir), 's3proxy.log');

export const s3Port = (): number => envPort('S3_PORT', 18082);
export const s3EndpointOf = (port: number): string => `http://127.0.0.1:${port}`;

/** Where one server lives and listens (the stack's, or a test's private one); `jarsStackDir` holds the resolved jar's path. */
export type S3Site = { stackDir: string; port: number; jarsStackDir: string };

/** The jar's path (the pom excludes its dependencies: the jar-with-dependencies is the whole classpath). */
const resolveJar = (stackDir: string, log: Log): Promise<string> =>
  mavenClasspath({ name: 's3', what: 'the S3Proxy jar', pom: POM, dir: s3Dir(stackDir), stackDir, log });

function writeConfig({ stackDir, port }: S3Site): string {
  const dir = s3Dir(stackDir);
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { recursive: true });
  const file = path.join(dir, 's3proxy.properties');
  fs.writeFileSync(
    file,
    [
      `s3proxy.endpoint=${s3EndpointOf(port)}`,
      's3proxy.authorization=aws-v2-or-v4',
      `s3proxy.identity=${S3PROXY_ACCESS_KEY_ID}`,
      `s3proxy.credential=${S3PROXY_SECRET_ACCESS_KEY}`,
      'jclouds.provider=filesystem',
      `jclouds.filesystem.basedir=${data.replaceAll('\\', '/')}`,
      // jclouds' own login to its backend; meaningless for the filesystem one, but required.
      'jclouds.identity=local',
      'jclouds.credential=local',
      '',
    ].join('\n'),
  );
  return file;
}

/** Anything S3-shaped answering on the port: an unsigned `GET /` is refused with an S3 XML error (or listed, without auth). */
export async function s3Answers(endpoint: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return (res.status === 200 || res.status === 403) && text.includes('<?xml');
  } catch {
    return false;
  }
}

export const s3ProxyPid = (stackDir: string): number | undefined => livePid(stackDir, 's3proxy', MARKER);

export async function spawnS3Proxy(site: S3Site, log: Log): Promise<number> {
  const jar = await resolveJar(site.jarsStackDir, log);
  const properties = writeConfig(site);
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  log(`s3: starting S3Proxy on 127.0.0.1:${site.port}`);
  return spawnDetached({
    stackDir: site.stackDir,
    name: 's3proxy',
    command: java,
    args: ['-Xmx384m', '-XX:+UseSerialGC', '-Djava.awt.headless=true', '-jar', jar, '--properties', properties],
    // Its logback reads these; the service's own LOG_LEVEL (e.g. silent) means nothing to it.
    env: { ...process.env, LOG_LEVEL: 'info', JETTY_LOG_LEVEL: 'warn' },
    logFile: s3LogFile(site.stackDir),
  });
}

export async function waitForS3Proxy(site: S3Site, pid: number | undefined, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  await waitUntil('s3', () => s3Answers(s3EndpointOf(site.port)), {
    timeoutMs,
    intervalMs: 200,
    pid,
    logFiles: [s3LogFile(site.stackDir)],
  });
}

/** The endpoint of the stack's S3Proxy, started unless it already answers. */
export async function ensureS3(stackDir: string, log: Log): Promise<string> {
  const site: S3Site = { stackDir, port: s3Port(), jarsStackDir: stackDir };
  const endpoint = s3EndpointOf(site.port);
  let pid = s3ProxyPid(stackDir);
  if (await s3Answers(endpoint)) {
    log(`s3: already running on ${endpoint}${pid ? ` (pid ${pid})` : ' (not managed by this stack)'}`);
    return endpoint;
  }
  if (pid === undefined) {
    if (await portOpen(site.port)) throw new Error(`s3: port ${site.port} is taken by something that is not an S3 server`);
    pid = await spawnS3Proxy(site, log);
  } else {
    log(`s3: pid ${pid} is starting, waiting`);
  }
  await waitForS3Proxy(site, pid);
  log(`s3: ready on ${endpoint}`);
  return endpoint;
}

export async function stopS3(stackDir: string, log: Log, timeoutMs = 15_000): Promise<void> {
  const pid = await stopProcess(stackDir, 's3proxy', MARKER, { timeoutMs });
  if (pid) log(`s3: stopped pid ${pid}`);
}

export async function s3Status(stackDir: string): Promise<{ up: boolean; detail: string }> {
  const endpoint = s3EndpointOf(s3Port());
  const pid = s3ProxyPid(stackDir);
  const up = await s3Answers(endpoint);
  return { up, detail: `${endpoint}${pid ? ` pid ${pid}` : ''}${up ? '' : ` not answering; see ${s3LogFile(stackDir)}`}` };
}
