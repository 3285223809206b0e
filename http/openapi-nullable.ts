/**
 * OpenAPI 3.0's `nullable` adds null only to the `type` beside it: without a `type` it means nothing, and strict JSON
 * Schema tooling (Ajv: `"nullable" cannot be used without "type"`) refuses to compile the schema at all. zod's 3.0
 * output puts `nullable` beside a union (`anyOf`) or a reference (`allOf: [{ $ref }]`), so those are rewritten here:
 * `nullable` moves onto the first branch that has a type (a referenced component is copied in with it).
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

/** Keywords that only describe: they may stay beside a reference that is copied in. */
const ANNOTATIONS = new Set(['description', 'title', 'example', 'deprecated', 'readOnly', 'writeOnly', 'externalDocs', 'default']);

/** `schema` that also takes null, with `nullable` only beside a `type`; undefined when it cannot be written so. */
function withNull(schema: Json, components: Json, seen: Set<string>): Json | undefined {
  if (schema.type !== undefined) return { ...schema, nullable: true };
  const reference = referenceOf(schema);
  if (reference !== undefined) {
    const name = decodeURIComponent(COMPONENT_REF.exec(reference)?.[1] ?? '');
    const component = components[name];
    if (!isObject(component) || seen.has(name)) return undefined;
    const copied = withNull(component, components, new Set([...seen, name]));
    const annotations = Object.fromEntries(Object.entries(schema).filter(([key]) => ANNOTATIONS.has(key)));
    return copied && { ...copied, ...annotations };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    for (const [index, branch] of branches.entries()) {
      const nullable = isObject(branch) ? withNull(branch, components, seen) : undefined;
      if (nullable) return { ...schema, [key]: branches.map((other, at) => (at === index ? nullable : other)) };
    }
  }
  return undefined;
}

/** `{ $ref }`, or `{ allOf: [{ $ref }] }` with nothing else but annotations: the reference. */
function referenceOf(schema: Json): string | undefined {
  const constraints = Object.keys(schema).filter((key) => !ANNOTATIONS.has(key) && key !== 'nullable');
  if (typeof schema.$ref === 'string' && constraints.length === 1) return schema.$ref;
  const [only, ...more] = Array.isArray(schema.allOf) ? schema.allOf : [];
  if (constraints.length === 1 && constraints[0] === 'allOf' && more.length === 0 && isObject(only) && typeof only.$ref === 'string') {
    return Object.keys(only).length === 1 ? only.$ref : undefined;
  }
  return undefined;
}

/** Rewrites, in place, every schema under `node` that is `nullable` without a `type`; throws for one it cannot. */
export function typeEveryNullable(node: unknown, components: Json, where = '#'): void {
  if (Array.isArray(node)) {
    node.forEach((child, index) => typeEveryNullable(child, components, `${where}/${index}`));
    return;
  }
  if (!isObject(node)) return;
  if (node.nullable === true && node.type === undefined) {
    const { nullable: _nullable, ...rest } = node;
    const rewritten = withNull(rest, components, new Set());
    if (!rewritten) throw new Error(`OpenAPI: ${where} is nullable without a type, and no branch of it can carry one`);
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, rewritten);
  }
  for (const [key, child] of Object.entries(node))
    typeEveryNullable(child, components, `${where}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
}
