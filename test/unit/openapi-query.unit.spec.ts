import { describe, expect, it } from 'vitest';
import { closedQueryAsOneParameter } from '../../http/openapi-query.ts';

const limit = { type: 'integer', minimum: 1 };

describe('a closed query in the document', () => {
  it('becomes one form-exploded object parameter that takes no other property', () => {
    const route = { url: '/things', schema: { querystring: { type: 'object', properties: { limit }, additionalProperties: false } } };
    expect(closedQueryAsOneParameter(route)).toEqual({
      url: '/things',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            query: {
              type: 'object',
              properties: { limit },
              additionalProperties: false,
              description: 'The query parameters limit, each as name=value; any other is refused (400).',
            },
          },
          style: 'form',
          explode: true,
        },
      },
    });
  });

  it('is required when one of its parameters is, and says so when it takes none', () => {
    const required = { querystring: { type: 'object', properties: { limit }, required: ['limit'], additionalProperties: false } };
    expect((closedQueryAsOneParameter({ schema: required }) as any).schema.querystring).toMatchObject({ required: ['query'] });
    const none = { querystring: { type: 'object', properties: {}, additionalProperties: false } };
    expect((closedQueryAsOneParameter({ schema: none }) as any).schema.querystring.properties.query.description).toBe(
      'This operation takes no query parameter: any is refused (400).',
    );
  });

  it('leaves an open query (one the route reads loosely, as the OAuth return) and a route without one as they are', () => {
    const open = { schema: { querystring: { type: 'object', properties: { limit } } } };
    expect(closedQueryAsOneParameter(open)).toBe(open);
    const hidden = { schema: { hide: true } };
    expect(closedQueryAsOneParameter(hidden)).toBe(hidden);
  });
});
