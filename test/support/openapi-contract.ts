import type { ValidateFunction } from 'ajv-draft-04';
import { openapiAjv, type OpenapiAjv, type OpenapiDocument } from './openapi-ajv.ts';

/** One HTTP exchange as the client saw it. */
export type Exchange = { method: string; path: string; status: number; headers: Headers; body: string };

/** The operation the exchange belongs to (`GET /api/v1/pim/products/{id}`) and what in the response breaks the document. */
export type Verdict = { operation: string; problems: string[] };

type Operation = { template: string; method: string; pattern: RegExp; literals: number; responses: Record<string, Response> };
type Response = { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { required?: boolean; schema?: unknown }> };

const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

const operationsOf = (document: OpenapiDocument): Operation[] =>
  Object.entries(document.paths ?? {}).flatMap(([template, item]) => {
    const segments = template.split('/');
    const pattern = new RegExp(`^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : escape(s))).join('/')}$`);
    const literals = segments.filter((s) => !s.startsWith('{')).length;
    return Object.entries(item)
      .filter(([method]) => method !== 'parameters' && typeof item[method] === 'object')
      .map(([method, operation]) => ({ template, method: method.toUpperCase(), pattern, literals, responses: operation.responses ?? {} }));
  });

const mediaTypeOf = (contentType: string | null): string | undefined => contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
const isJson = (media: string) => media === 'application/json' || media.endsWith('+json');

const ajvErrors = (validate: ValidateFunction): string =>
  (validate.errors ?? [])
    .map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'} ${JSON.stringify(error.params)}`)
    .join('; ');

/**
 * A service's OpenAPI document as a judge of its responses: the status must be declared for the operation (or a
 * `2XX` range, or `default`), the body must be the declared media type and valid against its schema (or absent where
 * no content is declared), and every declared header must be present when required and valid when present.
 */
export class OpenapiContract {
  private readonly operations: Operation[];
  private readonly ajv: OpenapiAjv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: OpenapiDocument) {
    this.ajv = openapiAjv(document);
    // A literal segment wins over a parameter: `/export/notification` before `/export/{id}`.
    this.operations = operationsOf(document).sort((a, b) => b.literals - a.literals);
  }

  /** The verdict on `exchange`, or undefined when the document has no operation for its method and path. */
  check(exchange: Exchange): Verdict | undefined {
    const method = exchange.method.toUpperCase();
    const operation = this.operations.find((candidate) => candidate.method === method && candidate.pattern.test(exchange.path));
    if (!operation) return undefined;
    const name = `${method} ${operation.template}`;
    const status = String(exchange.status);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => operation.responses[candidate] !== undefined);
    if (key === undefined) {
      return { operation: name, problems: [`status ${status} is not declared (declared: ${Object.keys(operation.responses).join(', ')})`] };
    }
    const response = operation.responses[key] as Response;
    return {
      operation: name,
      problems: [...this.bodyProblems(response, exchange), ...this.headerProblems(response, exchange)],
    };
  }

  private bodyProblems(response: Response, exchange: Exchange): string[] {
    const declared = Object.keys(response.content ?? {});
    const media = mediaTypeOf(exchange.headers.get('content-type'));
    if (declared.length === 0) {
      return exchange.body.length === 0 ? [] : [`no content is declared, yet the body is ${exchange.body.length} characters of ${media}`];
    }
    const match = declared.find((candidate) => candidate === media || candidate === '*/*' || candidate === `${media?.split('/')[0]}/*`);
    if (media === undefined || match === undefined)
      return [`the body's media type ${media} is not declared (declared: ${declared.join(', ')})`];
    if (!isJson(match)) return [];
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return [`the body is not JSON: ${exchange.body.slice(0, 200)}`];
    }
    const validate = this.validator(response.content?.[match]?.schema ?? {});
    return validate(body)
      ? []
      : [`the body does not match the schema: ${ajvErrors(validate)}; body: ${JSON.stringify(body).slice(0, 500)}`];
  }

  private headerProblems(response: Response, exchange: Exchange): string[] {
    return Object.entries(response.headers ?? {}).flatMap(([name, header]) => {
      const value = exchange.headers.get(name);
      if (value === null) return header.required ? [`the required header ${name} is missing`] : [];
      if (header.schema === undefined) return [];
      const validate = this.validator(header.schema);
      const type = (header.schema as { type?: string }).type;
      const typed = type === 'integer' || type === 'number' ? Number(value) : value;
      return validate(typed) ? [] : [`the header ${name}: ${value} does not match its schema: ${ajvErrors(validate)}`];
    });
  }

  /** Compiled once per schema text: most responses share one (the error body). */
  private validator(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    return validate;
  }
}
