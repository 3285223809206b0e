import { describe, expect, it } from 'vitest';
import { BATCHED_FETCH, GATHERED_FETCH, PROMPT_FETCH } from '../../ledger/kafka.ts';
import { nextFetch } from '../../ledger/kafka/fetcher.ts';
import { fetchOf, groupName, projectionGroups } from '../../ledger/projection-runner.ts';
import { projections } from '../../projections/index.ts';

describe('fetchOf: how a projection runner fetches, as its members ask', () => {
  const byGroup = new Map(projectionGroups(projections).map((group) => [groupName(group), fetchOf(group)]));

  it('fetches the push queue gathered: a saved connection waits for it, the catalog writes it reads do not', () => {
    expect(byGroup.get('push')).toBe(GATHERED_FETCH);
  });

  it('fetches promptly for every other runner (the catalog, audit and validation among them)', () => {
    const prompt = [...byGroup].filter(([, fetch]) => fetch === PROMPT_FETCH).map(([name]) => name);
    expect(prompt).toContain('catalog+audit+validation');
    expect(prompt).toContain('oms');
    expect([...byGroup].filter(([, fetch]) => fetch !== PROMPT_FETCH).map(([name]) => name)).toEqual(['push']);
  });

  it('waits at most 50 ms longer for an awaited write, gathering 16 KiB of the rest', () => {
    expect(GATHERED_FETCH).toMatchObject({ maxWaitMs: 50, minBytes: 16 * 1024 });
  });
});

describe('nextFetch: a gathered reader fetches promptly once idle', () => {
  it.each([
    ['gathered, the last fetch brought records', GATHERED_FETCH, true, GATHERED_FETCH],
    ['gathered, the last fetch brought nothing', GATHERED_FETCH, false, PROMPT_FETCH],
    ['prompt, the last fetch brought records', PROMPT_FETCH, true, PROMPT_FETCH],
    ['prompt, the last fetch brought nothing', PROMPT_FETCH, false, PROMPT_FETCH],
    ['batched, the last fetch brought nothing', BATCHED_FETCH, false, BATCHED_FETCH],
  ])('%s', (_case, settings, broughtRecords, expected) => {
    expect(nextFetch(settings, broughtRecords)).toBe(expected);
  });

  it('answers an idle gathered reader at its first record, and waits a second for it', () => {
    expect(nextFetch(GATHERED_FETCH, false)).toMatchObject({ minBytes: 1, maxWaitMs: 1_000 });
  });
});
