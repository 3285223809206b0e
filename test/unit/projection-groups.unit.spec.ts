import { describe, expect, it } from 'vitest';
import { groupName, projectionGroups } from '../../ledger/projection-runner.ts';
import { projections } from '../../projections/index.ts';

describe('projectionGroups', () => {
  it('puts the projections of the same topics with batch forms in one group (catalog and audit), every other alone', () => {
    const groups = projectionGroups(projections).map(groupName);
    expect(groups).toContain('catalog+audit');
    expect(groups.filter((name) => name.includes('+'))).toEqual(['catalog+audit']);
    expect(groups.flatMap((name) => name.split('+')).sort()).toEqual(projections.map((p) => p.name).sort());
  });
});
