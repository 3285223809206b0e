import { describe, expect, it } from 'vitest';
import { sessionsChangedBy } from '../../consumers/checkout/checkout-notifier.ts';
import { connectionsChangedBy } from '../../consumers/integrations/push-worker.ts';
import { ReadModelGate } from '../../ledger/read-model-gate.ts';

const connectionsTopic = 'ns.integrations.connection.events.v1';

/** A gate over a fact the test sets, on a clock the test moves; `reads` counts the looks. */
function gateOf(changedBy: (projection: string, topic: string) => boolean, pollMs = 2_000) {
  const state = { fact: true as boolean | Error, now: 1_000, reads: 0 };
  const gate = new ReadModelGate({
    read: async () => {
      state.reads += 1;
      if (state.fact instanceof Error) throw state.fact;
      return state.fact;
    },
    changedBy,
    pollMs,
    now: () => state.now,
  });
  return { gate, state };
}

describe("the push worker's gate: what a projection's progress means to it", () => {
  it.each([
    ['the push queue applied a connection event, none active', 'push', connectionsTopic, false, { wake: true, changed: true }],
    ['the push queue applied a connection event, one active', 'push', connectionsTopic, true, { wake: true, changed: true }],
    ['the push queue applied product events, none active', 'push', 'ns.catalog.product.events.v1', false, { wake: false, changed: false }],
    ['the push queue applied product events, one active', 'push', 'ns.catalog.product.events.v1', true, { wake: true, changed: false }],
    ['the push queue applied outcomes, none active', 'push', 'ns.integrations.item-push.events.v1', false, { wake: false, changed: false }],
    ['the catalog applied products, none active', 'catalog', 'ns.catalog.product.events.v1', false, { wake: false, changed: false }],
    ['the catalog applied products, one active', 'catalog', 'ns.catalog.product.events.v1', true, { wake: true, changed: false }],
    ["another projection's connections topic is not the push queue's", 'catalog', connectionsTopic, false, { wake: false, changed: false }],
  ])('%s', async (_case, projection, topic, active, expected) => {
    const { gate, state } = gateOf(connectionsChangedBy(connectionsTopic));
    state.fact = active;
    await gate.holds();
    expect(gate.news(projection, topic)).toEqual(expected);
  });
});

describe("the checkout notifier's gate: what a projection's progress means to it", () => {
  it.each([
    ['the checkout read model moved, no session completed', 'checkout', false, { wake: true, changed: true }],
    ['the checkout read model moved, a session completed', 'checkout', true, { wake: true, changed: true }],
    ['the orders moved, no session completed', 'oms', false, { wake: false, changed: false }],
    ['the orders moved, a session completed', 'oms', true, { wake: true, changed: false }],
  ])('%s', async (_, projection, completed, expected) => {
    const { gate, state } = gateOf(sessionsChangedBy);
    state.fact = completed;
    await gate.holds();
    expect(gate.news(projection, 'ns.any.events.v1')).toEqual(expected);
  });
});

describe('ReadModelGate: when the fact is read', () => {
  const changedBy = (projection: string) => projection === 'source';

  it('wakes the worker on any progress until the fact was first read', () => {
    const { gate } = gateOf(changedBy);
    expect(gate.news('other', 't')).toEqual({ wake: true, changed: false });
  });

  it('reads once within a poll, again once the poll has passed', async () => {
    const { gate, state } = gateOf(changedBy, 2_000);
    state.fact = false;
    expect(await gate.holds()).toBe(false);
    state.fact = true;
    state.now += 1_999;
    expect(await gate.holds()).toBe(false);
    expect(state.reads).toBe(1);
    state.now += 1;
    expect(await gate.holds()).toBe(true);
    expect(state.reads).toBe(2);
  });

  it('reads again at once after progress that may change it, not after other progress', async () => {
    const { gate, state } = gateOf(changedBy);
    state.fact = false;
    await gate.holds();
    state.fact = true;
    gate.news('other', 't');
    expect(await gate.holds()).toBe(false);
    gate.news('source', 't');
    expect(await gate.holds()).toBe(true);
    expect(state.reads).toBe(2);
  });

  it('a failed read throws and is tried again at the next look, keeping what was last read', async () => {
    const { gate, state } = gateOf(changedBy);
    state.fact = false;
    await gate.holds();
    state.now += 5_000;
    state.fact = new Error('database down');
    await expect(gate.holds()).rejects.toThrow('database down');
    expect(gate.news('other', 't').wake).toBe(false);
    state.fact = true;
    expect(await gate.holds()).toBe(true);
    expect(state.reads).toBe(3);
  });

  it('a new incarnation reads afresh', async () => {
    const { gate, state } = gateOf(changedBy);
    await gate.holds();
    gate.forget();
    await gate.holds();
    expect(state.reads).toBe(2);
  });
});
