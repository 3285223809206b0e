import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asyncApiDocument } from '../ledger/asyncapi.ts';
import { schemasRoot } from '../ledger/avro-schemas.ts';
import { allTopics } from '../ledger/topics.ts';

export const asyncApiPath = join(schemasRoot, '..', 'docs', 'asyncapi.json');

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(asyncApiPath, JSON.stringify(asyncApiDocument(allTopics), null, 2) + '\n');
  console.log(`wrote ${asyncApiPath}`);
}
