import { z } from 'zod';
import { webhookSecretSettings } from './commands/integrations/webhook-secret-config.ts';
import { bulkSettings } from './consumers/bulk/bulk-config.ts';
import { checkoutSettings } from './consumers/checkout/checkout-config.ts';
import { exportSettings } from './consumers/export/export-config.ts';
import { feedSettings } from './consumers/feed/feed-config.ts';
import { providerSettings } from './adapters/provider/provider-config.ts';
import { noticeSettings } from './adapters/notices/notice-config.ts';
import { httpSettings } from './http/http-config.ts';
import { rateLimitSettings } from './http/rate-limit-config.ts';
import { defineSettings, ledgerSettings, parseSettings } from './ledger/config.ts';
import { StartupError } from './ledger/startup-error.ts';
import { storageProblem, storageSettings } from './adapters/storage/storage-config.ts';

/** `http://HOST:PORT`, with a wildcard address read as this machine and an IPv6 literal in brackets. */
export function defaultPublicBaseUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

const serviceSettings = defineSettings({
  /**
   * Where the provider and the tenant's browser reach this service (webhook subscriptions, OAuth return, download links
   * of the filesystem store). Unset: `http://HOST:PORT`.
   */
  PUBLIC_BASE_URL: z.string().url().optional(),
});

/** Every module's settings, each declared beside the module that reads them; the ledger runtime's first. */
const groups = [
  ledgerSettings,
  httpSettings,
  rateLimitSettings,
  serviceSettings,
  bulkSettings,
  providerSettings,
  webhookSecretSettings,
  noticeSettings,
  exportSettings,
  storageSettings,
  feedSettings,
  checkoutSettings,
] as const;

const shape = {
  ...ledgerSettings.shape,
  ...httpSettings.shape,
  ...rateLimitSettings.shape,
  ...serviceSettings.shape,
  ...bulkSettings.shape,
  ...providerSettings.shape,
  ...webhookSecretSettings.shape,
  ...noticeSettings.shape,
  ...exportSettings.shape,
  ...storageSettings.shape,
  ...feedSettings.shape,
  ...checkoutSettings.shape,
};
const secrets = groups.flatMap((group) => group.secrets);

/** The service's configuration: every setting of every module, PUBLIC_BASE_URL resolved. */
export type Config = Omit<z.infer<z.ZodObject<typeof shape>>, 'PUBLIC_BASE_URL'> & { PUBLIC_BASE_URL: string };

/**
 * The settings from the environment; a value that does not parse throws a StartupError whose message is one line naming
 * each bad setting, the value tried (secrets hidden, passwords masked) and what was expected. So do settings that
 * do not go together.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const settings = parseSettings(shape, secrets, env);
  if (!settings.AUTH_JWKS_URL && !settings.AUTH_DEV_SECRET) {
    throw new StartupError('invalid configuration: set AUTH_JWKS_URL (production) or AUTH_DEV_SECRET (development mode)');
  }
  const storage = storageProblem(settings);
  if (storage) throw new StartupError(`invalid configuration: ${storage}`);
  const { AUTH_JWKS_URL, FILE_URL_SECRET, S3_ENDPOINT, S3_BUCKET } = settings;
  // Production authentication with the filesystem store's public development key would let anyone forge download links.
  if (AUTH_JWKS_URL && !FILE_URL_SECRET && !S3_ENDPOINT && !S3_BUCKET) {
    throw new StartupError(
      'invalid configuration: with AUTH_JWKS_URL (production) and the filesystem object store, set FILE_URL_SECRET (32 characters or more)',
    );
  }
  return { ...settings, PUBLIC_BASE_URL: settings.PUBLIC_BASE_URL ?? defaultPublicBaseUrl(settings.HOST, settings.PORT) };
}
