import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { tokenCli } from '../../bin/token.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The CLI in this process (quicker than a tsx per case): stdout, stderr and the exit code. */
const tokenHere = async (args: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const status = await tokenCli(
    args,
    { AUTH_DEV_SECRET: 'a-secret-for-this-test-0123456789' },
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { stdout: out.map((l) => `${l}\n`).join(''), stderr: err.map((l) => `${l}\n`).join(''), status };
};

/** The CLI as `npm run token -- …` runs it: stdout, stderr and the exit code. */
const token = (args: string[], secret = 'a-secret-for-this-test-0123456789') => {
  const run = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'bin', 'token.ts'), ...args], {
    env: { ...process.env, AUTH_DEV_SECRET: secret },
    encoding: 'utf8',
  });
  return { stdout: run.stdout, stderr: run.stderr, status: run.status };
};

// Some cases start the CLI as a process of its own (tsx compiling bin/token.ts): on a loaded machine that alone can take
// longer than the unit run's default 5 s, which is not what these cases are about.
describe('npm run token', { timeout: 60_000 }, () => {
  it('prints an HS256 development token with the tenant, org and email asked for', async () => {
    const tenant = randomUUID();
    const org = randomUUID();
    const secret = 'a-secret-for-this-test-0123456789';
    const token = execFileSync(
      join(root, 'node_modules', '.bin', 'tsx'),
      [join(root, 'bin', 'token.ts'), '--tenant', tenant, '--org', org, '--email', 'dev@example.com'],
      {
        env: { ...process.env, AUTH_DEV_SECRET: secret },
        encoding: 'utf8',
      },
    ).trim();
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret));
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ tenant_id: tenant, org_id: org, email: 'dev@example.com' });
    expect(payload.sub).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
  });

  it('with no arguments invents a tenant and org, prints them on stderr and only the token on stdout', async () => {
    const secret = 'a-secret-for-this-test-0123456789';
    const run = token([], secret);
    expect(run.status).toBe(0);
    const tenant = /invented tenant ([0-9a-f-]{36}) \(send it as X-Tenant-ID\)/.exec(run.stderr)?.[1];
    const org = /invented org ([0-9a-f-]{36}) \(send it as X-Org-ID\)/.exec(run.stderr)?.[1];
    expect(tenant).toMatch(uuid);
    expect(org).toMatch(uuid);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    const { payload } = await jwtVerify(run.stdout.trim(), new TextEncoder().encode(secret));
    expect(payload).toMatchObject({ tenant_id: tenant, org_id: org });
  });

  it('says nothing on stderr when the tenant and org are given', async () => {
    const run = await tokenHere(['--tenant', randomUUID(), '--org', randomUUID()]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
  });

  it.each([['--help'], ['-h']])('%s prints the usage on stdout, exit 0', async (flag) => {
    const run = flag === '--help' ? token([flag]) : await tokenHere([flag]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: npm run token -- \[--tenant <uuid>\] \[--org <uuid>\]/);
    for (const option of ['--tenant', '--org', '--email', '--user', '--expires-in']) expect(run.stdout).toContain(option);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    [['--tenant', 'not-a-uuid'], '--tenant must be a UUID'],
    [['--org', '42'], '--org must be a UUID'],
    [['--user', 'me'], '--user must be a UUID'],
    [['--email', 'not-an-address'], '--email must be an email address'],
    [['--expires-in', 'forever'], '--expires-in must be a period'],
    [['--bogus'], "Unknown option '--bogus'"],
    [['extra'], 'extra'],
  ])('refuses %j with a clear message and exit 2, printing no token', async (args, message) => {
    const run = args[0] === '--tenant' ? token(args) : await tokenHere(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`npm run token: `);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain('--help');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
