import type { FastifyInstance } from 'fastify';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const notUtf8 = () => Object.assign(new Error('the body is not valid UTF-8'), { statusCode: 400 });

/**
 * JSON bodies as fastify parses them, but decoded strictly: fastify's own parser turns invalid UTF-8 into U+FFFD,
 * so a client's broken bytes would be stored as replacement characters instead of being refused.
 */
export function useStrictJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let decoded: string;
    try {
      decoded = utf8.decode(body as Buffer);
    } catch {
      done(notUtf8(), undefined);
      return;
    }
    // The default parser answers through `done`; what it returns carries nothing more.
    void parseJson(request, decoded, done);
  });
}
