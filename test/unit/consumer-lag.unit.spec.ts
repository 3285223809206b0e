import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConsumerLagReader, consumerLags, groupsToReport } from '../../ledger/consumer-lag.ts';
import type { Kafka } from '../../ledger/kafka.ts';
import { LedgerMetrics } from '../../ledger/metrics.ts';
import { ProcessorMetrics, timedTransaction } from '../../ledger/processor-metrics.ts';

describe('consumerLags', () => {
  const ends = new Map([
    [
      'ns.catalog.product.commands.v1',
      new Map([
        [0, '120'],
        [1, '7'],
        [2, '0'],
      ]),
    ],
    ['ns.catalog.product.events.v1', new Map([[0, '31']])],
  ]);

  it('is the log end minus the committed offset, per group, topic and partition', () => {
    const samples = consumerLags(
      [
        {
          group: 'ns.commerce-ledger.product-processor',
          topics: [
            {
              topic: 'ns.catalog.product.commands.v1',
              partitions: [
                { partition: 0, offset: '100' },
                { partition: 1, offset: '7' },
              ],
            },
          ],
        },
        {
          group: 'ns.commerce-ledger.sku-router',
          topics: [{ topic: 'ns.catalog.product.events.v1', partitions: [{ partition: 0, offset: '30' }] }],
        },
      ],
      ends,
    );
    expect(samples).toEqual([
      { group: 'ns.commerce-ledger.product-processor', topic: 'ns.catalog.product.commands.v1', partition: 0, lag: 20 },
      { group: 'ns.commerce-ledger.product-processor', topic: 'ns.catalog.product.commands.v1', partition: 1, lag: 0 },
      // The commit marker after a transactional topic's last record: an idle reader shows 1.
      { group: 'ns.commerce-ledger.sku-router', topic: 'ns.catalog.product.events.v1', partition: 0, lag: 1 },
    ]);
  });

  it('leaves out partitions with nothing committed or no known end, and never goes below zero', () => {
    const samples = consumerLags(
      [
        {
          group: 'g',
          topics: [
            {
              topic: 'ns.catalog.product.commands.v1',
              partitions: [
                { partition: 0, offset: '-1' },
                { partition: 2, offset: '5' },
                { partition: 9, offset: '3' },
              ],
            },
            { topic: 'gone', partitions: [{ partition: 0, offset: '3' }] },
          ],
        },
      ],
      ends,
    );
    // An end read before a newer commit (the two are not read at once) gives no negative lag.
    expect(samples).toEqual([{ group: 'g', topic: 'ns.catalog.product.commands.v1', partition: 2, lag: 0 }]);
  });
});

describe('groupsToReport', () => {
  it("keeps the namespace's groups with members, and the known ones even while empty", () => {
    const known = new Set(['ns.commerce-ledger.product-processor']);
    const groups = groupsToReport(
      [
        { groupId: 'ns.commerce-ledger.product-processor', state: 'Empty' },
        { groupId: 'ns.commerce-ledger.projection.catalog.2', state: 'Stable' },
        { groupId: 'ns.commerce-ledger.projection.catalog.1', state: 'Empty' },
        { groupId: 'ns.commerce-ledger.edge.dead', state: 'Dead' },
        { groupId: 'ns.commerce-ledger.catalog-feed', state: 'PreparingRebalance' },
        { groupId: 'other.commerce-ledger.product-processor', state: 'Stable' },
      ],
      'ns.commerce-ledger.',
      known,
    );
    expect(groups).toEqual([
      'ns.commerce-ledger.catalog-feed',
      'ns.commerce-ledger.product-processor',
      'ns.commerce-ledger.projection.catalog.2',
    ]);
  });
});

describe('ConsumerLagReader', () => {
  /** An admin client whose brokers answer until `hang` is set, then never (an outage), or fail once `fail` is set. */
  function fakeKafka() {
    const broker = { hang: false, fail: false, listGroupsCalls: 0, admins: 0, committed: '5' };
    const answer = <T>(value: T): Promise<T> =>
      broker.hang ? new Promise<T>(() => undefined) : broker.fail ? Promise.reject(new Error('broker gone')) : Promise.resolve(value);
    const admin = () => {
      broker.admins++;
      return {
        connect: () => answer(undefined),
        disconnect: () => Promise.resolve(),
        listGroups: () => {
          broker.listGroupsCalls++;
          return answer({ groups: [{ groupId: 'ns.commerce-ledger.product-processor', protocolType: 'consumer' }] });
        },
        describeGroups: (ids: string[]) => answer({ groups: ids.map((groupId) => ({ groupId, state: 'Stable' })) }),
        fetchOffsets: () => answer([{ topic: 't', partitions: [{ partition: 0, offset: broker.committed, metadata: null }] }]),
        logEnds: () => answer(new Map([[0, 9n]])),
      };
    };
    return { kafka: { admin } as unknown as Kafka, broker };
  }
  const sample = (lag: number) => [{ group: 'ns.commerce-ledger.product-processor', topic: 't', partition: 0, lag }];

  it('serves the last lags, older and older, while the brokers do not answer, and never waits longer than its timeout', async () => {
    const { kafka, broker } = fakeKafka();
    const reader = new ConsumerLagReader(kafka, 'ns.commerce-ledger.', new Set(), { maxAgeMs: 0, timeoutMs: 50 });
    expect((await reader.read())?.samples).toEqual(sample(4));
    broker.hang = true;
    broker.committed = '9';
    const started = Date.now();
    const during = await reader.read();
    const again = await reader.read();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(during?.samples).toEqual(sample(4));
    expect(again?.ageSeconds).toBeGreaterThanOrEqual(during?.ageSeconds ?? Infinity);
    // One reading at a time: the hung one is not started again by every scrape.
    expect(broker.listGroupsCalls).toBe(2);
  });

  it('reads with a fresh admin client after a failure, and has nothing to serve before a first reading', async () => {
    const { kafka, broker } = fakeKafka();
    broker.fail = true;
    const reader = new ConsumerLagReader(kafka, 'ns.commerce-ledger.', new Set(), { maxAgeMs: 0, timeoutMs: 1_000 });
    expect(await reader.read()).toBeUndefined();
    broker.fail = false;
    expect((await reader.read())?.samples).toEqual(sample(4));
    expect(broker.admins).toBe(2);
    await reader.stop();
  });
});

describe('processor metrics', () => {
  it('count a round per aggregate and a transaction per outcome', async () => {
    const registry = new Registry();
    const metrics = new ProcessorMetrics(registry);
    metrics.round(
      'product',
      0.004,
      3,
      new Map([
        ['product', { accepted: 2, rejected: 1 }],
        ['quality', { accepted: 2, rejected: 0 }],
      ]),
    );
    await timedTransaction(metrics, 'product-processor', async () => undefined);
    await expect(
      timedTransaction(metrics, 'product-processor', async () => {
        throw new Error('fenced');
      }),
    ).rejects.toThrow('fenced');
    const text = await registry.metrics();
    expect(text).toContain('ledger_decided_commands_total{aggregate="product",outcome="accepted"} 2');
    expect(text).toContain('ledger_decided_commands_total{aggregate="product",outcome="rejected"} 1');
    expect(text).toContain('ledger_decided_commands_total{aggregate="quality",outcome="accepted"} 2');
    expect(text).not.toContain('aggregate="quality",outcome="rejected"');
    expect(text).toContain('ledger_round_commands_sum{aggregate="product"} 3');
    expect(text).toContain('ledger_decide_duration_seconds_count{aggregate="product"} 1');
    expect(text).toContain('ledger_transactions_total{part="product-processor",outcome="committed"} 1');
    expect(text).toContain('ledger_transactions_total{part="product-processor",outcome="aborted"} 1');
    expect(text).toContain('ledger_transaction_duration_seconds_count{part="product-processor"} 2');
  });

  it("are served after the service's own when they come from another registry (the processor thread's)", async () => {
    const service = new LedgerMetrics();
    const thread = new Registry();
    new ProcessorMetrics(thread).transaction('product-processor', 'committed', 0.01);
    service.addExposition(() => thread.metrics());
    service.addExposition(() => Promise.reject(new Error('thread gone')));
    const text = await service.text();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('ledger_transactions_total{part="product-processor",outcome="committed"} 1');
    expect(text.match(/^# TYPE ledger_transactions_total /gm)).toHaveLength(1);
    expect(text.endsWith('\n')).toBe(true);
  });
});
