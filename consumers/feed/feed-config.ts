import { z } from 'zod';
import { defineSettings } from '../../ledger/config.ts';

/** The catalog feed: when it is rebuilt, how long its links and replaced files live, how builds are paced. */
export const feedSettings = defineSettings({
  /** The catalog feed is rebuilt once a tenant's changes have been quiet this long (docs/decisions.md "Catalog feed")… */
  FEED_QUIET_MS: z.coerce.number().int().min(0).default(1_000),
  /** …or this long after its first change not yet in the feed, whichever comes first. */
  FEED_MAX_DELAY_MS: z.coerce.number().int().min(0).default(5_000),
  /** How long the link GET /api/v1/ucp/catalog.json (and the JSON-lines sibling) redirects to stays valid. */
  FEED_LINK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(900),
  /** How long a catalog feed file no longer served is kept (at least FEED_LINK_SECONDS: a link handed out keeps working). */
  FEED_KEEP_REPLACED_SECONDS: z.coerce.number().int().min(0).default(3_600),
  /**
   * After a build, its feed rests this many times the build's own work (reading and publishing) before the next: a
   * large catalog changing without pause (a bulk import) spends at most 1 / (1 + this) of its time rebuilding its feed.
   */
  FEED_REST_FACTOR: z.coerce.number().min(0).default(4),
  /** Feeds built side by side (each tenant's one at a time). */
  FEED_BUILDS_AT_ONCE: z.coerce.number().int().min(1).default(2),
  /** Products read from the read model per page while a feed is built. */
  FEED_PAGE_SIZE: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /** How long a build waits for the read models to reach what was consumed before it gives up (and is tried again). */
  FEED_READ_MODEL_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
});
