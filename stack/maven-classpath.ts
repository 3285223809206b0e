import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { logsDir, type Log } from './process-control.ts';

const run = promisify(execFile);

/**
 * The runtime classpath a pom declares, resolved by Maven from Central and cached in `dir` per pom content, so Maven
 * only runs when the pom changes (or a cached jar has gone).
 */
export async function mavenClasspath(options: { name: string; what: string; pom: string; dir: string; stackDir: string; log: Log }) {
  const { name, what, pom, dir, stackDir, log } = options;
  const pomHash = createHash('sha256').update(fs.readFileSync(pom)).digest('hex').slice(0, 12);
  const cacheFile = path.join(dir, `classpath-${pomHash}.txt`);
  if (fs.existsSync(cacheFile)) {
    const cp = fs.readFileSync(cacheFile, 'utf8').trim();
    if (cp && cp.split(path.delimiter).every((jar) => fs.existsSync(jar))) return cp;
  }
  log(`${name}: resolving ${what} with Maven (first run only)...`);
  const started = Date.now();
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(logsDir(stackDir), { recursive: true });
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  const mavenLog = path.join(logsDir(stackDir), `maven-${name}.log`);
  const mvn = process.platform === 'win32' ? 'mvn.cmd' : 'mvn';
  try {
    const { stdout, stderr } = await run(
      mvn,
      ['-q', '-B', '-Dstyle.color=never', '-f', pom, 'dependency:build-classpath', `-Dmdep.outputFile=${tmp}`],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    fs.writeFileSync(mavenLog, stdout + stderr);
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    fs.writeFileSync(mavenLog, `${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    throw new Error(`${name}: Maven could not resolve ${pom}; see ${mavenLog}`, { cause: err });
  }
  fs.renameSync(tmp, cacheFile);
  log(`${name}: ${what} resolved in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return fs.readFileSync(cacheFile, 'utf8').trim();
}
