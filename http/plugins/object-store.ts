import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.ts';
import type { Logger } from '../../ledger/logger.ts';
import { createObjectStore, type ObjectStore } from '../../adapters/storage/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where exports and catalog feeds are written (storage/): the filesystem, or S3 when configured. */
    objectStore: ObjectStore;
  }
}

/** One store per service, from the config; closed with the app. */
export const objectStorePlugin = fp(
  async (app: FastifyInstance, { config, logger }: { config: Config; logger: Logger }) => {
    const store = createObjectStore(config, logger);
    app.decorate('objectStore', store);
    app.addHook('onClose', () => store.close());
  },
  { name: 'object-store' },
);
