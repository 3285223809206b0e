import { describe, expect, it } from 'vitest';
import { groupName, projectionGroups } from '../../ledger/projection-runner.ts';
import { projections } from '../../projections/index.ts';

describe('projectionGroups', () => {
  it('puts the projections a product write waits for in one group with the audit trail, every other alone', () => {
    const groups = projectionGroups(projections).map(groupName);
    expect(groups.filter((name) => name.includes('+'))).toEqual(['catalog+audit+validation']);
    expect(groups.flatMap((name) => name.split('+')).sort()).toEqual(projections.map((p) => p.name).sort());
  });

  it('groups projections of the same topics unless they name a runner, and those of different runners apart', () => {
    const [catalog, audit] = projections;
    const unnamed = (name: string) => ({ ...catalog!, name, runner: undefined });
    expect(projectionGroups([unnamed('a'), unnamed('b')]).map(groupName)).toEqual(['a+b']);
    expect(projectionGroups([unnamed('a'), { ...unnamed('b'), runner: 'elsewhere' }]).map(groupName)).toEqual(['a', 'b']);
    expect(projectionGroups([catalog!, { ...audit!, runner: 'elsewhere' }]).map(groupName)).toEqual(['catalog', 'audit']);
  });
});
