import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import type { PushAction } from './item-push.ts';

/**
 * An explicit request to push a product to every active connection (`POST /unified/sync/push/product`). Changes of the
 * catalog are pushed without one; this forces a push (or a removal from the platforms) of the product as it is now.
 * The edge checks the product is the tenant's before it asks.
 */

export type ProductPushRequested = Event<'ProductPushRequested', { productId: string; action: PushAction }>;
export type ProductPushEvent = ProductPushRequested;

export type ProductPush = { requests: number };

export const initialState = (): ProductPush => ({ requests: 0 });

export const evolve = (state: ProductPush, event: ProductPushEvent): ProductPush => {
  switch (event.type) {
    case 'ProductPushRequested':
      return { requests: state.requests + 1 };
    default: {
      const exhaustive: never = event.type;
      return exhaustive;
    }
  }
};

export type RequestProductPush = Command<'RequestProductPush', ProductPushRequested['data']>;
export type ProductPushCommand = RequestProductPush;

export const decide = (command: ProductPushCommand, _state: ProductPush): ProductPushEvent[] => {
  switch (command.type) {
    case 'RequestProductPush':
      return [{ type: 'ProductPushRequested', data: command.data }];
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const productPushDecider: Decider<ProductPushCommand, ProductPushEvent, ProductPush> = { initialState, evolve, decide };

export const productPushAggregate = defineAggregate({
  name: 'product-push',
  stream: 'integrations.product-push',
  decider: productPushDecider,
  id: 'productId',
  events: { namespace: 'commerce.ledger.integrations', types: ['ProductPushRequested'] },
});
