/**
 * A route whose query schema refuses unknown parameters (`additionalProperties: false`: every route under /api, see
 * http/app.ts) is documented with its query as one form-exploded object parameter: OpenAPI 3.0 can say "these
 * parameters and no others" only that way, and a validating client then refuses a misspelt filter as the service does.
 * The parameters themselves read as before (`?limit=5&offset=0`): `style: form, explode: true` spreads the object's
 * properties over the query string.
 */

type Json = Record<string, unknown>;

const QUERY_PARAMETER = 'query';

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The route's transformed schema (fastify-type-provider-zod's `jsonSchemaTransform` output), its closed query wrapped. */
export function closedQueryAsOneParameter<T extends { schema?: unknown }>(transformed: T): T {
  const schema = transformed.schema;
  if (!isObject(schema) || !isObject(schema.querystring) || schema.querystring.additionalProperties !== false) return transformed;
  const query = schema.querystring;
  const names = Object.keys(isObject(query.properties) ? query.properties : {});
  const required = Array.isArray(query.required) && query.required.length > 0;
  const description =
    names.length === 0
      ? 'This operation takes no query parameter: any is refused (400).'
      : `The query parameters ${names.join(', ')}, each as name=value; any other is refused (400).`;
  return {
    ...transformed,
    schema: {
      ...schema,
      querystring: {
        type: 'object',
        properties: { [QUERY_PARAMETER]: { ...query, description } },
        ...(required ? { required: [QUERY_PARAMETER] } : {}),
        style: 'form',
        explode: true,
      },
    },
  };
}
