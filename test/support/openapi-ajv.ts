import ajvDraft04, { type ValidateFunction } from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';

/**
 * Ajv as the strictest OpenAPI 3.0 tooling reads a document's schemas. OpenAPI 3.0's Schema Object is JSON Schema
 * draft 04 (Wright draft 00) with `nullable` and a few annotations, so: Ajv's draft-04 dialect, in strict mode (an
 * unknown keyword or format, `nullable` without `type`, a keyword that does not fit the type, a `required` property
 * not defined: each refuses to compile), the formats of ajv-formats (OpenAPI's int32, int64, float, double, byte,
 * binary and password among them), and no `discriminator` (Ajv takes it only as an option, with no `mapping`).
 */

export type OpenapiDocument = { paths?: Record<string, Record<string, any>>; components?: { schemas?: Record<string, unknown> } };

/** The id each component schema has in Ajv: on its own, so that compiling a schema compiles only what it refers to. */
const COMPONENT_ID = 'openapi-component:';

/** OpenAPI's annotations that draft 04 does not define (it knows title, description and default). */
const ANNOTATIONS = ['example', 'externalDocs', 'xml', 'deprecated', 'readOnly', 'writeOnly'];

/** `schema` with each `#/components/schemas/X` made a reference into the components Ajv holds. */
const withComponentRefs = (schema: unknown): any =>
  JSON.parse(JSON.stringify(schema ?? {}).replaceAll('"#/components/schemas/', `"${COMPONENT_ID}`));

/**
 * The schema as converters from OpenAPI 3.0 to plain JSON Schema read it (validating proxies run them before Ajv):
 * `nullable: true` becomes a `null` type, and null is appended to an `enum`, so `enum: [null]` becomes a duplicate.
 */
function asJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, key === 'enum' ? value : asJsonSchema(value)]));
  if (nullable !== true) return converted;
  if (typeof converted.type === 'string') converted.type = [converted.type, 'null'];
  if (Array.isArray(converted.enum)) converted.enum = [...(converted.enum as unknown[]), null];
  return converted;
}

export type OpenapiAjv = { compile: (schema: unknown) => ValidateFunction };

/**
 * A strict Ajv holding the document's component schemas; `compile` takes a schema as the document spells it.
 * `asConverted`: read every schema as a converter to plain JSON Schema does first (see asJsonSchema).
 */
export function openapiAjv(document: OpenapiDocument, { asConverted = false } = {}): OpenapiAjv {
  // CommonJS modules, both: their default export is under `default`. Union types are what the conversion makes.
  // Each component compiled once, not inlined where used: five times faster over the document's response schemas.
  const ajv = new ajvDraft04.default({ strict: true, inlineRefs: false, allowUnionTypes: asConverted });
  ajvFormats.default(ajv);
  ajv.addVocabulary(ANNOTATIONS);
  const read = (schema: unknown) => withComponentRefs(asConverted ? asJsonSchema(schema) : schema);
  // Registered without checking: each component is compiled (and its errors reported) where it is used.
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    ajv.addSchema(read(schema), `${COMPONENT_ID}${encodeURIComponent(name)}`, undefined, false);
  }
  return { compile: (schema) => ajv.compile(read(schema)) };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every schema of the document with where it stands: components, parameters, request bodies, responses, headers. */
export function schemasOf(document: OpenapiDocument): Array<{ where: string; schema: unknown }> {
  const found = Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => ({ where: `component ${name}`, schema }));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS.filter((m) => item[m])) {
      const operation = item[method];
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
        found.push({ where: `${at} ${parameter.in} parameter ${parameter.name}`, schema: parameter.schema });
      }
      for (const [media, content] of Object.entries<any>(operation.requestBody?.content ?? {})) {
        found.push({ where: `${at} request ${media}`, schema: content.schema });
      }
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        for (const [media, content] of Object.entries<any>(response.content ?? {})) {
          found.push({ where: `${at} ${status} ${media}`, schema: content.schema });
        }
        for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
          found.push({ where: `${at} ${status} header ${name}`, schema: header.schema });
        }
      }
    }
  }
  return found.filter(({ schema }) => schema !== undefined);
}

/**
 * Each schema of the document that strict Ajv refuses to compile, as the document spells it or as a converter to
 * plain JSON Schema reads it (`where` then ends in "(converted)"), with why. Empty when every one compiles both ways.
 */
export function uncompilableSchemas(document: OpenapiDocument): Array<{ where: string; error: string }> {
  const readings = [
    { ajv: openapiAjv(document), suffix: '' },
    { ajv: openapiAjv(document, { asConverted: true }), suffix: ' (converted)' },
  ];
  return readings.flatMap(({ ajv, suffix }) =>
    schemasOf(document).flatMap(({ where, schema }) => {
      try {
        ajv.compile(schema);
        return [];
      } catch (error) {
        return [{ where: `${where}${suffix}`, error: (error as Error).message }];
      }
    }),
  );
}
