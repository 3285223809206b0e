import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LAYERS = ['ledger', 'commands', 'projections', 'consumers', 'adapters', 'http', 'bin'];
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** An import of a Kafka client library (the schema registry client is no Kafka client). */
const KAFKA_CLIENT = /from\s*'(kafkajs|@platformatic\/kafka|@confluentinc\/kafka-javascript|node-rdkafka)(\/[^']*)?'/;

/** None: the batch-first projections (issue 27) removed the last two. */
const KNOWN_CYCLES = new Set<string>();

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

/** Every file of the service's layers with the files of the tree it imports (type-only imports count: they couple too). */
const graph = (): Map<string, string[]> => {
  const edges = new Map<string, string[]>();
  for (const file of LAYERS.flatMap(sources)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => relative(ROOT, resolve(ROOT, dirname(file), (m[1] ?? m[2]) as string)));
    edges.set(file, targets);
  }
  return edges;
};

const layerOf = (file: string) => file.split('/')[0];

/** Each cycle once, as the edge that closes it (from a file to one already on the path). */
const cycles = (edges: Map<string, string[]>): string[] => {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string) => {
    state.set(file, 'open');
    for (const target of edges.get(file) ?? []) {
      if (!edges.has(target)) continue;
      if (state.get(target) === 'open') found.push([file, target].sort().join(' -> '));
      else if (!state.has(target)) visit(target);
    }
    state.set(file, 'done');
  };
  for (const file of [...edges.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
};

describe('the import graph', () => {
  const edges = graph();

  it('finds the tree', () => {
    expect(edges.size).toBeGreaterThan(100);
    expect(edges.get('http/app.ts')?.length).toBeGreaterThan(5);
  });

  it('has no import between http/ and consumers/, in either direction', () => {
    const crossing = [...edges].flatMap(([file, targets]) =>
      targets
        .filter((target) => new Set([layerOf(file), layerOf(target)]).size === 2)
        .filter((target) => [layerOf(file), layerOf(target)].every((layer) => layer === 'http' || layer === 'consumers'))
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossing).toEqual([]);
  });

  it('keeps ledger/ free of the domain', () => {
    const domain = new Set(['commands', 'projections', 'consumers', 'adapters', 'http']);
    const leaks = [...edges]
      .filter(([file]) => layerOf(file) === 'ledger')
      .flatMap(([file, targets]) => targets.filter((t) => domain.has(layerOf(t) as string)).map((t) => `${file} -> ${t}`));
    expect(leaks).toEqual([]);
  });

  it('reaches Kafka only through the port (ledger/kafka.ts and ledger/kafka/): nothing else imports a Kafka client', () => {
    const files = [...LAYERS, 'stack', 'bench', 'test'].flatMap(sources);
    const port = (file: string) => file === 'ledger/kafka.ts' || file.startsWith('ledger/kafka/');
    const clients = files.filter((file) => !port(file) && KAFKA_CLIENT.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(clients).toEqual([]);
    // And the port does use one: the test would pass vacuously if the client's name changed.
    expect(files.filter((file) => port(file) && KAFKA_CLIENT.test(readFileSync(join(ROOT, file), 'utf8'))).length).toBeGreaterThan(3);
  });

  it('has no import cycle', () => {
    expect(cycles(edges).filter((cycle) => !KNOWN_CYCLES.has(cycle))).toEqual([]);
  });
});
