import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { asyncApiPath } from '../../bin/asyncapi.ts';
import { aggregates } from '../../commands/index.ts';
import { topicsOf } from '../../ledger/aggregate.ts';
import { asyncApiDocument } from '../../ledger/asyncapi.ts';
import { shortName } from '../../ledger/topics.ts';

const allTopics = topicsOf(aggregates);

describe('the event catalog', () => {
  it('docs/asyncapi.json is generated from the current schemas (run `npm run asyncapi`)', () => {
    expect(JSON.parse(readFileSync(asyncApiPath, 'utf8'))).toEqual(asyncApiDocument(allTopics));
  });

  it('lists every event record of every events topic', () => {
    const document = asyncApiDocument(allTopics) as { components: { messages: Record<string, unknown> } };
    const records = allTopics.flatMap((topic) => topic.records.map(shortName));
    expect(records).toEqual(expect.arrayContaining(['ProductCreated', 'OrderPlaced', 'StockReserved']));
    expect(Object.keys(document.components.messages).sort()).toEqual([...new Set(records)].sort());
  });
});
