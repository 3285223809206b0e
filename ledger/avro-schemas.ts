import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `.avsc` paths mirror their namespace: commerce.ledger.catalog.ProductCreated → schemas/commerce/ledger/catalog/ProductCreated.avsc */
export const schemasRoot = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

export const schemaPath = (fullName: string, root = schemasRoot): string => join(root, ...fullName.split('.')) + '.avsc';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const primitives = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/**
 * Reads a record schema and inlines every named type it refers to from its own file, so the
 * registry receives one self-contained schema per event and the files stay free of copies.
 */
export function loadSchema(fullName: string, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): Json {
  const defined = new Set<string>();
  const load = (name: string): Json => JSON.parse(readFile(schemaPath(name))) as Json;

  const qualify = (name: string, namespace: string): string => (name.includes('.') || !namespace ? name : `${namespace}.${name}`);

  const resolve = (node: Json, namespace: string): Json => {
    if (typeof node === 'string') {
      if (primitives.has(node)) return node;
      const name = qualify(node, namespace);
      return defined.has(name) ? name : resolve(load(name), namespace);
    }
    if (Array.isArray(node)) return node.map((branch) => resolve(branch, namespace));
    if (node === null || typeof node !== 'object') return node;
    switch (node.type) {
      case 'record':
      case 'enum':
      case 'fixed': {
        const ownNamespace = typeof node.namespace === 'string' ? node.namespace : namespace;
        const name = qualify(String(node.name), ownNamespace);
        defined.add(name);
        if (!Array.isArray(node.fields)) return node;
        const inner = name.slice(0, Math.max(0, name.lastIndexOf('.')));
        const fields = node.fields.map((field) => {
          const f = field as { [key: string]: Json };
          return { ...f, type: resolve(f.type ?? null, inner) };
        });
        return { ...node, fields };
      }
      case 'array':
        return { ...node, items: resolve(node.items ?? null, namespace) };
      case 'map':
        return { ...node, values: resolve(node.values ?? null, namespace) };
      default:
        return { ...node, type: resolve(node.type ?? null, namespace) };
    }
  };

  return resolve(load(fullName), '');
}
