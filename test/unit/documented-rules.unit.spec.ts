import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { urlTemplateProblem } from '../../commands/ucp/feed-settings.ts';
import { planItem } from '../../commands/bulk/bulk-items.ts';
import { bulkItemsOf, payloadValue } from '../../http/bulk-payload.ts';
import { documentedBody, submittedBody } from '../../http/bulk-job-body.ts';
import { httpUrl } from '../../http/catalog-schemas.ts';
import { urlTemplateSchema } from '../../http/feed-url-template.ts';
import { createOrderBody } from '../../http/order-schemas.ts';
import { openapiAjv } from '../support/openapi-ajv.ts';

/** A zod schema as the document publishes it (the type provider's conversion: OpenAPI 3.0, as a request reads it), compiled strictly. */
const published = (schema: z.ZodType) => openapiAjv({}).compile(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }));

/**
 * The rules the service enforces in code (refinements, the command's checks, the bulk worker) and what the document
 * says of them must agree: what the document accepts, the service accepts; what a rule refuses, the document refuses.
 */
describe('the rules the document states, against the rules the service enforces', () => {
  it('product URL template: an http(s) URL without credentials naming {id} or {sku}, no other brace', () => {
    const documented = (template: string) =>
      template.length <= urlTemplateSchema.maxLength && new RegExp(urlTemplateSchema.pattern, 'u').test(template);
    const accepted = [
      'https://shop.example.com/products/{sku}',
      'http://shop.example.com/p/{id}?ref={sku}',
      'HTTPS://{sku}.shop.example.com/',
      'https://shop.example.com/a/{id}/b/{id}#top',
      `https://shop.example.com/{id}/${'a'.repeat(1970)}`, // 2000 characters
    ];
    const refused = [
      'https://shop.example.com/products', // no placeholder
      'https://shop.example.com/{name}', // unknown placeholder
      'https://shop.example.com/{id', // unbalanced
      'https://shop.example.com/id}/{id}',
      'ftp://shop.example.com/{id}', // not http(s)
      'https://user:secret@shop.example.com/{id}', // credentials
      '/products/{id}', // not absolute
      `https://shop.example.com/{id}/${'a'.repeat(1971)}`, // 2001 characters
    ];
    for (const template of accepted)
      expect([template, documented(template), urlTemplateProblem(template)]).toEqual([template, true, undefined]);
    for (const template of refused) {
      expect([template, documented(template)]).toEqual([template, false]);
      expect(urlTemplateProblem(template), template).toBeDefined();
    }
  });

  it('http(s) URL (a brand’s logoUrl, a media url): absolute, http or https, with a host', () => {
    const documented = published(httpUrl);
    for (const url of ['https://cdn.example.com/acme.png', 'HTTP://cdn.example.com', 'https://cdn.example.com:8443/a?b=c#d']) {
      expect([url, documented(url), httpUrl.safeParse(url).success]).toEqual([url, true, true]);
    }
    for (const url of [
      'ftp://cdn.example.com/acme.png',
      'mailto:a@example.com',
      'cdn.example.com/acme.png',
      'https://',
      'javascript:alert(1)',
    ]) {
      expect([url, documented(url), httpUrl.safeParse(url).success]).toEqual([url, false, false]);
    }
  });

  it('payment transaction id: the pattern of the order’s provider, and only that one', () => {
    const documented = published(createOrderBody);
    const order = (provider: string, id: string) => ({
      idempotency_key: 'k',
      payment_provider: provider,
      payment_transaction_id: id,
      line_items: [{ name: 'Cup', quantity: 1, unit_price: '1.00' }],
    });
    const samples: [string, string][] = [
      ['stripe', 'pi_3MtwBwLkdIwHu7ix'],
      ['stripe', 'XXP2K7BJ5A9C3Q4LM'],
      ['paypal', 'XXP2K7BJ5A9C3Q4LM'],
      ['paypal', 'pi_3MtwBwLkdIwHu7ix'],
      ['adyen', 'QFQTPCQ8HXSKGK82'],
      ['adyen', 'qfqtpcq8hxskgk82'],
      ['manual', 'cash:2024-05-01'],
      ['manual', 'cash register 1'],
    ];
    for (const [provider, id] of samples) {
      const body = order(provider, id);
      expect([provider, id, documented(body)]).toEqual([provider, id, createOrderBody.safeParse(body).success]);
    }
    expect(samples.filter(([provider, id]) => documented(order(provider, id)))).toHaveLength(4);
  });

  it('bulk job: a body the document accepts is taken, and each of its items becomes a product command', () => {
    const documented = published(documentedBody);
    const id = '6f1c2a9e-4b1d-4c7e-9a55-0d3b7f2e8c11';
    const bodies = [
      { job_type: 'BULK_IMPORT', payload: [{ title: 'Cup', sku: 'CUP-1', description: null }] },
      { job_type: 'BULK_IMPORT', payload: { items: [{ title: 'Cup', brand: 'Acme' }] } },
      { job_type: 'BULK_IMPORT', payload: '[{"title":"Cup"}]' },
      { job_type: 'BULK_UPDATE', payload: [{ id, status: 'DRAFT' }] },
      { job_type: 'BULK_UPDATE', payload: { ids: [id], set: { category: 'kitchen' } } },
      { job_type: 'BULK_DELETE', payload: [id, { id, title: 'as GET lists it' }] },
      { job_type: 'BULK_DELETE', payload: { ids: [id] } },
    ];
    for (const body of bodies) {
      expect([body, documented(body)]).toEqual([body, true]);
      const { job_type: type, payload } = submittedBody.parse(body);
      const items = bulkItemsOf(type, payloadValue(payload), 100);
      expect(items.map((item, index) => planItem(type, id, index, item).kind)).toEqual(items.map(() => 'command'));
    }
  });

  it('bulk job: a payload that fits no form is refused by the document as by the service', () => {
    const documented = published(documentedBody);
    const refused = [
      { job_type: 'BULK_IMPORT', payload: [] },
      { job_type: 'BULK_IMPORT', payload: [1, 2] },
      { job_type: 'BULK_UPDATE', payload: [{ title: 'no id' }] },
      { job_type: 'BULK_UPDATE', payload: { ids: ['6f1c2a9e-4b1d-4c7e-9a55-0d3b7f2e8c11'] } },
      { job_type: 'BULK_DELETE', payload: [1] },
      { job_type: 'BULK_DELETE', payload: { ids: [], set: {} } },
      { job_type: 'BULK_MERGE', payload: [{ title: 'x' }] },
    ];
    for (const body of refused) expect([body, documented(body), serviceRefuses(body)]).toEqual([body, false, true]);
  });
});

/** The route's check of the body, then the payload's (400 either way). */
const serviceRefuses = (body: unknown): boolean => {
  const parsed = submittedBody.safeParse(body);
  if (!parsed.success) return true;
  try {
    bulkItemsOf(parsed.data.job_type, payloadValue(parsed.data.payload), 100);
    return false;
  } catch {
    return true;
  }
};
