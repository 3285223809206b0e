import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { describe, expect, inject, it } from 'vitest';
import { aggregates } from '../../commands/index.ts';
import { topicsOf } from '../../ledger/aggregate.ts';
import { loadSchema, schemasRoot } from '../../ledger/avro-schemas.ts';

const repoRoot = join(schemasRoot, '..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

const avscFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? avscFiles(path) : path.endsWith('.avsc') ? [path] : [];
  });

const fullNameOf = (path: string) =>
  relative(schemasRoot, path)
    .replace(/\.avsc$/, '')
    .split(sep)
    .join('.');

/** Every committed version of every file the schema pulls in, read from git at that commit. */
function committedVersions(fullName: string): { commit: string; schema: unknown }[] {
  const path = relative(repoRoot, join(schemasRoot, ...fullName.split('.'))) + '.avsc';
  let commits: string[];
  try {
    commits = git('log', '--format=%H', '--', 'schemas').split('\n').filter(Boolean);
  } catch {
    return []; // not a git checkout: only the working copy can be checked
  }
  return commits.flatMap((commit) => {
    try {
      git('cat-file', '-e', `${commit}:${path}`);
    } catch {
      return [];
    }
    const schema = loadSchema(fullName, (file) => git('show', `${commit}:${relative(repoRoot, file).split(sep).join('/')}`));
    return [{ commit, schema }];
  });
}

const eventRecords = topicsOf(aggregates).flatMap((topic) => topic.records);

describe('event schemas', () => {
  it('has one .avsc per event record, at the path of its namespace', () => {
    const files = avscFiles(schemasRoot).map(fullNameOf);
    for (const record of eventRecords) expect(files).toContain(record);
  });

  it.each(eventRecords)('%s is BACKWARD compatible with every committed version', (record) => {
    const current = avro.Type.forSchema(loadSchema(record) as avro.Schema);
    for (const { commit, schema } of committedVersions(record)) {
      const previous = avro.Type.forSchema(schema as avro.Schema);
      // BACKWARD: a reader on the new schema must read data written with the old one.
      expect(() => current.createResolver(previous), `${record} against ${commit.slice(0, 8)}`).not.toThrow();
    }
  });

  it('the registry refuses a change that is not BACKWARD compatible', async () => {
    const registry = new SchemaRegistry({ host: inject('stack').schemaRegistryUrl });
    const subject = `compat-check-${randomUUID()}-commerce.ledger.catalog.ProductCreated`;
    const original = loadSchema('commerce.ledger.catalog.ProductCreated') as { fields: object[] };
    const first = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(original) }, { subject });
    const again = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(original) }, { subject });
    expect(again.id).toBe(first.id);

    const compatible = { ...original, fields: [...original.fields, { name: 'subtitle', type: ['null', 'string'], default: null }] };
    await expect(registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(compatible) }, { subject })).resolves.toHaveProperty(
      'id',
    );

    const breaking = { ...compatible, fields: [...compatible.fields, { name: 'mandatory', type: 'string' }] };
    await expect(registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(breaking) }, { subject })).rejects.toThrow();
  });
});
