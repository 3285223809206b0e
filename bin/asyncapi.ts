import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aggregates } from '../commands/index.ts';
import { topicsOf } from '../ledger/aggregate.ts';
import { asyncApiDocument } from '../ledger/asyncapi.ts';
import { schemasRoot } from '../ledger/avro-schemas.ts';

export const asyncApiPath = join(schemasRoot, '..', 'docs', 'asyncapi.json');

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(asyncApiPath, JSON.stringify(asyncApiDocument(topicsOf(aggregates)), null, 2) + '\n');
  console.log(`wrote ${asyncApiPath}`);
}
