import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTopics, kafkaErrorType, quietKafka, topicSettings, type Admin } from '../../ledger/kafka.ts';
import { topic } from '../../ledger/topics.ts';

/** What start-up asks of the broker: the topics made once, with their settings, and a refusal named at once. */
describe('ensureTopics on the real broker', () => {
  let admin: Admin;
  const namespace = `int-ensure-${randomUUID().slice(0, 8)}`;
  const specs = [topic('catalog.thing.events.v1', 'events', 'id'), topic('catalog.thing.state.v1', 'state', 'id')];

  beforeAll(async () => {
    admin = quietKafka(inject('stack').kafkaBrokers, 'int-ensure-topics').admin();
    await admin.connect();
  });

  afterAll(async () => {
    const topics = (await admin.listTopics()).filter((name) => name.startsWith(`${namespace}.`));
    if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  });

  it('creates the missing topics with their partitions and settings, and leaves them be the second time', async () => {
    await ensureTopics(admin, namespace, specs, 3, 1_000_000);
    await ensureTopics(admin, namespace, specs, 5, 2_000_000);
    const names = specs.map((spec) => `${namespace}.${spec.name}`);
    const metadata = await admin.fetchTopicMetadata({ topics: names });
    const partitions = Object.fromEntries(metadata.topics.map((t) => [t.name, t.partitions.length]));
    expect(partitions).toEqual(Object.fromEntries(names.map((name) => [name, 3])));
    const settings = await topicSettings(admin, names, ['cleanup.policy', 'max.message.bytes']);
    expect(settings[names[0]!]).toEqual({ 'cleanup.policy': 'delete', 'max.message.bytes': String(1_000_000 + 64 * 1024) });
    expect(settings[names[1]!]).toEqual({ 'cleanup.policy': 'compact', 'max.message.bytes': String(1_000_000 + 64 * 1024) });
  });

  it('gives up at once on a refusal of the topics themselves, rather than looking again for a minute', async () => {
    const started = Date.now();
    const refusal = await ensureTopics(admin, `${namespace}-bad`, specs, 3, -1_000_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(kafkaErrorType(refusal)).toBe('INVALID_CONFIG');
    // Looking again would take the whole minute of patience; one refusal is a round trip.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await admin.listTopics()).filter((name) => name.startsWith(`${namespace}-bad.`))).toEqual([]);
  });
});
