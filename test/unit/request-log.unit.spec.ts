import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLog } from '../../http/request-log.ts';

/** A fastify app logging at `level` into an array, with the service's request log. */
const appLogging = (level: string) => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level }, stream), logController: new RequestLog() });
  app.get('/products/:id', async (request) => {
    request.log.info('the route says something');
    return { ok: true };
  });
  return { app, lines };
};

describe('RequestLog: one line per request', () => {
  it('writes one line when the request ends, with the request, its status and its time, under its id', async () => {
    const { app, lines } = appLogging('info');
    const answer = await app.inject({ method: 'GET', url: '/products/7?x=1' });
    expect(answer.statusCode).toBe(200);
    const ofRequest = lines.filter((line) => line.reqId !== undefined);
    expect(ofRequest.map((line) => line.msg)).toEqual(['the route says something', 'request completed']);
    expect(ofRequest[1]).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/products/7?x=1' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    await app.close();
  });

  it('writes nothing for a request that ends well when the level is above info', async () => {
    const { app, lines } = appLogging('warn');
    expect((await app.inject({ method: 'GET', url: '/products/7' })).statusCode).toBe(200);
    expect(lines).toEqual([]);
    await app.close();
  });
});
