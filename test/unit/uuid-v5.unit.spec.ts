import { randomUUID } from 'node:crypto';
import { v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { qualityNamespaceOf } from '../../commands/quality/validation-issue.ts';

describe('uuidv5', () => {
  it('gives what the uuid package gives, for any name and namespace', () => {
    const names = ['', 'a', 'bulk/1/2', 'ünïcödé ✓ 𝄞', 'x'.repeat(1000), ...Array.from({ length: 200 }, () => randomUUID())];
    for (const name of names) {
      const namespace = randomUUID();
      expect(uuidv5(name, namespace)).toBe(v5(name, namespace));
    }
  });
});

describe('qualityNamespaceOf', () => {
  it("is the owner's UUIDv5 under the quality namespace, the same when asked again and another for another owner", () => {
    const owners = Array.from({ length: 1_200 }, () => [randomUUID(), randomUUID()] as const);
    const first = owners.map(([tenantId, orgId]) => qualityNamespaceOf(tenantId, orgId));
    // Past the kept thousand: the earliest owners are worked out again, to the same ids.
    const again = owners.map(([tenantId, orgId]) => qualityNamespaceOf(tenantId, orgId));
    expect(again).toEqual(first);
    for (const [index, [tenantId, orgId]] of owners.entries()) {
      expect(first[index]).toBe(v5(`${tenantId}/${orgId}`, 'c4a1e6f2-7b0d-4d1e-8f3a-5e2b9c7d1a44'));
    }
    expect(new Set(first).size).toBe(owners.length);
  });
});
