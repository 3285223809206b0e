import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('npm run token', () => {
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
});
