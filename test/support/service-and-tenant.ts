import { afterAll, beforeAll } from 'vitest';
import { newTenant, type Tenant } from './client.ts';
import { startService, type Service, type ServiceOptions } from './service.ts';

export type ServiceAndTenant = {
  readonly service: Service;
  readonly tenant: Tenant;
  /** Another tenant of the same service: its own org and user unless `overrides` name them. */
  newTenant: (overrides?: Parameters<typeof newTenant>[1]) => Promise<Tenant>;
};

/**
 * A running service and a fresh tenant for the file (or the `describe`) that calls it: started before its tests, stopped
 * after them. `options` may be a function, for options known only once an earlier `beforeAll` has run.
 */
export function useServiceAndTenant(options: ServiceOptions | (() => ServiceOptions) = {}): ServiceAndTenant {
  let service: Service | undefined;
  let tenant: Tenant | undefined;
  beforeAll(async () => {
    service = await startService(typeof options === 'function' ? options() : options);
    tenant = await newTenant(service.baseUrl);
  });
  afterAll(() => service?.discard());

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the service starts in beforeAll: read it inside a hook or a test');
    return value;
  };
  return {
    get service() {
      return started(service);
    },
    get tenant() {
      return started(tenant);
    },
    newTenant: (overrides) => newTenant(started(service).baseUrl, overrides),
  };
}
