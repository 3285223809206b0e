import { randomUUID } from 'node:crypto';
import { v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidv5 } from '../../ledger/uuid-v5.ts';

describe('uuidv5', () => {
  it('gives what the uuid package gives, for any name and namespace', () => {
    const names = ['', 'a', 'bulk/1/2', 'ünïcödé ✓ 𝄞', 'x'.repeat(1000), ...Array.from({ length: 200 }, () => randomUUID())];
    for (const name of names) {
      const namespace = randomUUID();
      expect(uuidv5(name, namespace)).toBe(v5(name, namespace));
    }
  });
});
