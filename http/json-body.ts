import type { FastifyInstance } from 'fastify';
import { tooDeepBody } from './json-depth.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const notUtf8 = () => Object.assign(new Error('the request body is not valid UTF-8'), { statusCode: 400 });

/**
 * Bodies are JSON and nothing else: fastify's default `text/plain` parser is removed, so a body of any other media
 * type is answered 415 before a route runs.
 *
 * JSON bodies are parsed as fastify parses them, but decoded strictly: fastify's own parser turns invalid UTF-8 into
 * U+FFFD, so a client's broken bytes would be stored as replacement characters instead of being refused. An empty
 * body is taken as no body at all, as if no Content-Type had been sent: many clients send `Content-Type:
 * application/json` on every request, a DELETE's included. A route that needs a body then refuses the missing one
 * with its own validation error. A body nested deeper than MAX_JSON_DEPTH is refused (400) before it is parsed.
 */
export function useStrictJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    const tooDeep = tooDeepBody(bytes);
    if (tooDeep) {
      done(tooDeep, undefined);
      return;
    }
    let decoded: string;
    try {
      decoded = utf8.decode(bytes);
    } catch {
      done(notUtf8(), undefined);
      return;
    }
    // The default parser answers through `done`; what it returns carries nothing more.
    void parseJson(request, decoded, done);
  });
}
