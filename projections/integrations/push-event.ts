import type { ProductEvent } from '../../commands/catalog/product.ts';
import type { ConnectionEvent } from '../../commands/integrations/connection.ts';
import type { ItemPushEvent } from '../../commands/integrations/item-push.ts';
import type { ProductPushEvent } from '../../commands/integrations/product-push.ts';

/** The events of the push queue besides the product's own: connections, explicit requests and the worker's outcomes. */
export type PushQueueEvent = ProductPushEvent | ConnectionEvent | ItemPushEvent;

/** The events the push queue is made of. */
export type PushEvent = ProductEvent | PushQueueEvent;
