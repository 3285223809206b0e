import { STATUS_CODES } from 'node:http';
import { typeEveryNullable } from './openapi-nullable.ts';
import { declareResponses, type DocumentOperation } from './openapi-responses.ts';

/**
 * The last pass over the generated OpenAPI document (the swagger plugin's `transformObject`, after the type provider
 * has filled `components.schemas`). It changes only the description, never how a route validates:
 *
 * - the standard headers `X-Tenant-ID` and `X-Org-ID`, which every authenticated route declares, become security
 *   schemes required beside the bearer token, so /docs asks for them once (Authorize) instead of on every operation;
 * - path parameters follow one convention: `{id}` for the resource the path names, `{<parent>_id}` for a parent or
 *   another resource (`/products/{product_id}/variants`, `/inventory/levels/{variant_id}/{location_id}`); routes that
 *   spell them otherwise are renamed here (the URL itself is unchanged: only the template's variable name differs);
 * - a response the route did not describe reads as its HTTP status ("Not Found") rather than "Default Response";
 * - every operation declares the responses the service really sends (openapi-responses.ts): no content where there is
 *   no body, `Location` on a redirect, and the statuses answered before or around any handler (413, 414, 415, …);
 * - `nullable` stands only beside a `type`, as OpenAPI 3.0 and strict JSON Schema tooling require (openapi-nullable.ts);
 * - component schemas nothing refers to (the type provider emits an input and an output variant of every registered
 *   schema) are left out.
 */

type Json = Record<string, unknown>;

type Parameter = { in?: string; name?: string; required?: boolean; description?: string; schema?: Json; $ref?: string };

type Operation = { parameters?: Parameter[]; security?: Array<Record<string, string[]>>; [key: string]: unknown };

type PathItem = Record<string, unknown> & { parameters?: Parameter[] };

export type OpenapiDocument = {
  openapi?: string;
  paths?: Record<string, PathItem>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown>; [key: string]: unknown };
  security?: Array<Record<string, string[]>>;
  [key: string]: unknown;
};

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** The security scheme names of the bearer token and the two standard headers. */
export const SECURITY = { bearer: 'bearer', tenant: 'tenantId', org: 'orgId' } as const;

/** Header name (lower case, as fastify declares it) → the security scheme that stands for it. */
const STANDARD_HEADERS: Record<string, { scheme: string; header: string; description: string }> = {
  'x-tenant-id': {
    scheme: SECURITY.tenant,
    header: 'X-Tenant-ID',
    description: 'The tenant (a UUID) the request acts in: the one the bearer token is linked to.',
  },
  'x-org-id': {
    scheme: SECURITY.org,
    header: 'X-Org-ID',
    description: 'The organization (a UUID) the request acts in: the one the bearer token is linked to.',
  },
};

/**
 * Path parameters the routes spell otherwise than the convention, by their name in the route → their name in the
 * document. `orderID` is the order's own id in `/oms/orders/{orderID}` and `/oms/orders/{orderID}/status`.
 */
export const PATH_PARAMETER_NAMES: Readonly<Record<string, string>> = { orderID: 'id' };

/** The convention every path parameter of the document follows: `id`, or a snake_case name ending in `_id`. */
export const PATH_PARAMETER_CONVENTION = /^(id|[a-z]+(_[a-z]+)*_id)$/;

const operationsOf = (item: PathItem): Array<[string, Operation]> =>
  Object.entries(item).filter(([method, value]) => HTTP_METHODS.has(method) && typeof value === 'object' && value !== null) as Array<
    [string, Operation]
  >;

function renamePathParameters(paths: Record<string, PathItem>): Record<string, PathItem> {
  const renamed: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries(paths)) {
    const names = new Map<string, string>();
    const newPath = path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
      const to = PATH_PARAMETER_NAMES[name] ?? name;
      names.set(name, to);
      return `{${to}}`;
    });
    const targets = [...names.values()];
    if (new Set(targets).size !== targets.length) throw new Error(`OpenAPI: renaming the parameters of ${path} gives ${newPath}`);
    if (renamed[newPath]) throw new Error(`OpenAPI: ${path} and another path both become ${newPath}`);

    const rename = (parameters: Parameter[] | undefined): Parameter[] | undefined =>
      parameters?.map((parameter) =>
        parameter.in === 'path' && parameter.name !== undefined && names.has(parameter.name)
          ? { ...parameter, name: names.get(parameter.name) }
          : parameter,
      );
    const newItem: PathItem = { ...item };
    if (item.parameters) newItem.parameters = rename(item.parameters);
    for (const [method, operation] of operationsOf(item)) newItem[method] = { ...operation, parameters: rename(operation.parameters) };
    renamed[newPath] = newItem;
  }
  return renamed;
}

/**
 * Takes the required standard headers out of each operation's parameters and into its security requirement. The
 * document's default requirement becomes all three (bearer, tenant, org); an operation that asks for less states its
 * own, and a public one (`security: []`) is left as it is.
 */
function standardHeadersAsSecurity(document: OpenapiDocument, paths: Record<string, PathItem>): void {
  const all = [SECURITY.bearer, SECURITY.tenant, SECURITY.org];
  const requirement = (schemes: string[]) => Object.fromEntries(schemes.map((scheme) => [scheme, []]));
  for (const item of Object.values(paths)) {
    for (const [, operation] of operationsOf(item)) {
      if (operation.security?.length === 0) continue; // public
      const schemes: string[] = [];
      const kept = (operation.parameters ?? []).filter((parameter) => {
        const standard =
          parameter.in === 'header' && parameter.required === true ? STANDARD_HEADERS[parameter.name?.toLowerCase() ?? ''] : undefined;
        if (standard) schemes.push(standard.scheme);
        return standard === undefined;
      });
      if (kept.length > 0) operation.parameters = kept;
      else delete operation.parameters;
      if (operation.security !== undefined) {
        operation.security = operation.security.map((alternative) => ({ ...alternative, ...requirement(schemes) }));
      } else if (schemes.length < Object.keys(STANDARD_HEADERS).length) {
        operation.security = [requirement([SECURITY.bearer, ...schemes])];
      }
    }
  }
  document.security = [requirement(all)];
  document.components = {
    ...document.components,
    securitySchemes: {
      ...document.components?.securitySchemes,
      ...Object.fromEntries(
        Object.values(STANDARD_HEADERS).map(({ scheme, header, description }) => [
          scheme,
          { type: 'apiKey', in: 'header', name: header, description },
        ]),
      ),
    },
  };
}

const SCHEMA_REF = /^#\/components\/schemas\/(.+)$/;

function collectSchemaRefs(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const entry of value) collectSchemaRefs(entry, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const match = SCHEMA_REF.exec(child);
        if (match?.[1] !== undefined) found.add(decodeURIComponent(match[1]));
      } else {
        collectSchemaRefs(child, found);
      }
    }
  }
}

/** Keeps the component schemas the paths refer to, directly or through other components. */
function pruneUnusedSchemas(document: OpenapiDocument): void {
  const schemas = document.components?.schemas;
  if (!schemas) return;
  const { schemas: _schemas, ...rest } = document.components ?? {};
  const used = new Set<string>();
  collectSchemaRefs({ ...document, components: rest }, used);
  const queue = [...used];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    const found = new Set<string>();
    collectSchemaRefs(schemas[name], found);
    for (const reference of found) {
      if (used.has(reference)) continue;
      used.add(reference);
      queue.push(reference);
    }
  }
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
  };
}

/** "Default Response", the swagger plugin's placeholder, becomes the status's reason phrase. */
function describeResponses(paths: Record<string, PathItem>): void {
  for (const item of Object.values(paths)) {
    for (const [, operation] of operationsOf(item)) {
      const responses = operation.responses as Record<string, { description?: string }> | undefined;
      for (const [status, response] of Object.entries(responses ?? {})) {
        if (response.description === 'Default Response' && STATUS_CODES[status]) response.description = STATUS_CODES[status];
      }
    }
  }
}

/** The component every error response refers to: `errorBody` in schemas.ts. */
const ERROR_SCHEMA = 'Error';

function declareEveryResponse(document: OpenapiDocument, paths: Record<string, PathItem>): void {
  if (!document.components?.schemas?.[ERROR_SCHEMA]) throw new Error(`OpenAPI: the error body (${ERROR_SCHEMA}) is not a component`);
  for (const item of Object.values(paths)) {
    for (const [method, operation] of operationsOf(item)) {
      declareResponses(method, operation as DocumentOperation, `#/components/schemas/${ERROR_SCHEMA}`);
    }
  }
}

/** The finished document: see the file's comment. Returns a new object; `generated` is not modified. */
export function finishOpenapiDocument<T>(generated: T): T {
  const document = structuredClone(generated) as OpenapiDocument;
  const paths = renamePathParameters(document.paths ?? {});
  standardHeadersAsSecurity(document, paths);
  declareEveryResponse(document, paths);
  describeResponses(paths);
  document.paths = paths;
  const components = document.components?.schemas ?? {};
  typeEveryNullable(paths, components, '#/paths');
  typeEveryNullable(components, components, '#/components/schemas');
  pruneUnusedSchemas(document);
  return document as T;
}
