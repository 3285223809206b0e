import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../ledger/errors.ts';
import { FilesystemObjectStore, verifyDownload } from '../../adapters/storage/filesystem-store.ts';
import { attachmentDisposition, keyProblem } from '../../adapters/storage/object-key.ts';
import { ForbiddenError } from '../errors.ts';

const single = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * `GET /files/<key>?expires=…[&filename=…]&signature=…`: the filesystem store's download links (storage/signed-url.ts).
 * Public, as the signature is the authorisation: 403 when it is wrong or has expired, checked before the object is
 * looked up (a forged link does not learn whether a key exists), then 404 when the object is absent. With S3 the
 * links are presigned at the bucket and this route answers 404. Not in the OpenAPI document: not part of the API.
 */
export default async function fileRoutes(app: FastifyInstance): Promise<void> {
  app.get('/files/*', { schema: { hide: true } }, async (request, reply) => {
    const store = app.objectStore;
    if (!(store instanceof FilesystemObjectStore)) {
      throw new NotFoundError('files are served by the object store (S3), not by this service');
    }
    const key = (request.params as { '*': string })['*'];
    const query = request.query as Record<string, unknown>;
    const filename = single(query.filename);
    const verdict = verifyDownload(store.secret, {
      key,
      expires: single(query.expires),
      signature: single(query.signature),
      filename,
    });
    if (verdict === 'expired') throw new ForbiddenError('the download link has expired');
    if (verdict !== 'valid') throw new ForbiddenError('the download link is not valid');
    const file = keyProblem(key) ? null : await store.read(key);
    if (!file) throw new NotFoundError('the file no longer exists');
    const { contentType, contentEncoding, cacheControl } = file.meta;
    reply.header('content-type', contentType ?? 'application/octet-stream');
    reply.header('content-length', String(file.size));
    if (contentEncoding) reply.header('content-encoding', contentEncoding);
    if (cacheControl) reply.header('cache-control', cacheControl);
    if (filename !== undefined) reply.header('content-disposition', attachmentDisposition(filename));
    return reply.send(file.body);
  });
}
