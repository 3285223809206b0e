import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureStack } from '../../stack/stack.ts';

// `npm start` (and `npm test`) with SCHEMA_REGISTRY_URL set use that registry instead of starting one: it gets the
// settings ours gets (stack/registry/registry.ts configureRegistry), so that a subject without a compatibility level of
// its own is BACKWARD there too. The stack's own registry stands in for an external one here.
const registryUrl = inject('stack').schemaRegistryUrl;
const subject = `external-registry-${randomUUID()}`;
const headers = { 'content-type': 'application/vnd.schemaregistry.v1+json' };
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${registryUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json().catch(() => undefined) };
};

afterAll(async () => {
  await call('DELETE', `/subjects/${subject}`);
  await call('DELETE', `/subjects/${subject}?permanent=true`);
});

describe('an external schema registry', () => {
  it('is configured like the local one: a subject without a level of its own becomes BACKWARD', async () => {
    const schema = JSON.stringify({ type: 'record', name: 'Probe', namespace: 'test.external', fields: [{ name: 'id', type: 'string' }] });
    expect((await call('POST', `/subjects/${subject}/versions`, { schema })).status).toBe(200);
    // Apicurio stores a subject-level NONE as "no rule of its own".
    await call('PUT', `/config/${subject}`, { compatibility: 'NONE' });
    expect((await call('GET', `/config/${subject}`)).body).toMatchObject({ compatibilityLevel: 'NONE' });

    const before = process.env.SCHEMA_REGISTRY_URL;
    process.env.SCHEMA_REGISTRY_URL = registryUrl;
    try {
      expect((await ensureStack()).schemaRegistryUrl).toBe(registryUrl);
    } finally {
      if (before === undefined) delete process.env.SCHEMA_REGISTRY_URL;
      else process.env.SCHEMA_REGISTRY_URL = before;
    }
    expect((await call('GET', `/config/${subject}`)).body).toMatchObject({ compatibilityLevel: 'BACKWARD' });
    expect((await call('GET', '/config')).body).toMatchObject({ compatibilityLevel: 'BACKWARD' });
  });
});
