import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { stopKafka } from '../../stack/kafka/kafka.ts';
import { stopPostgres } from '../../stack/postgres/postgres.ts';
import { isAlive } from '../../stack/process-control.ts';
import { stopS3 } from '../../stack/s3/s3proxy.ts';
import { stackDir } from '../../stack/stack.ts';

const OWNER_FILE = 'owner.pid';
const ORPHAN_STOP_TIMEOUT_MS = 5_000;
const quiet = (): void => undefined;

export const privateRoot = (): string => path.join(stackDir(), 'private');

/**
 * A fresh `.stack/private/<name>-<random>` owned by this process. A test that died without its afterAll
 * (a killed worker) leaves its broker or cluster running detached: whatever a dead owner left is stopped and removed first.
 */
export async function claimPrivateDir(name: string): Promise<string> {
  await reapOrphans();
  const dir = path.join(privateRoot(), `${name}-${randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${process.pid}\n`);
  return dir;
}

/** A directory without its owner file yet is being claimed by another worker right now, unless it is old. */
function ownerOf(dir: string): number | 'being-claimed' {
  try {
    return Number(fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8').trim()) || 0;
  } catch {
    const age = Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    return age < 60_000 ? 'being-claimed' : 0;
  }
}

async function reapOrphans(): Promise<void> {
  const root = privateRoot();
  if (!fs.existsSync(root)) return;
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(root, entry.name);
    const owner = ownerOf(dir);
    if (owner === 'being-claimed' || (owner > 0 && isAlive(owner))) continue;
    await Promise.all([
      stopKafka(dir, quiet, ORPHAN_STOP_TIMEOUT_MS),
      stopPostgres(dir, quiet, ORPHAN_STOP_TIMEOUT_MS),
      stopS3(dir, quiet, ORPHAN_STOP_TIMEOUT_MS),
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
