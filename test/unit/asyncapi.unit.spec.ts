import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { asyncApiPath } from '../../bin/asyncapi.ts';
import { asyncApiDocument } from '../../ledger/asyncapi.ts';
import { allTopics } from '../../ledger/topics.ts';

describe('the event catalog', () => {
  it('docs/asyncapi.json is generated from the current schemas (run `npm run asyncapi`)', () => {
    expect(JSON.parse(readFileSync(asyncApiPath, 'utf8'))).toEqual(asyncApiDocument(allTopics));
  });

  it('lists every event record of every events topic', () => {
    const document = asyncApiDocument(allTopics) as { components: { messages: Record<string, unknown> } };
    expect(Object.keys(document.components.messages).sort()).toEqual(['ProductCreated', 'ProductDeleted', 'ProductUpdated', 'VariantAdded']);
  });
});
