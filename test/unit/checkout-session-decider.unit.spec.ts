import { describe, expect, it } from 'vitest';
import { cartProblems, exactMinorUnits, type Cart } from '../../commands/acp/checkout-cart.ts';
import { agentCheckoutDecider } from '../../commands/acp/agent-checkout.ts';
import { checkoutSessionDecider, evolve, initialState, type CheckoutSessionEvent } from '../../commands/acp/checkout-session.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(checkoutSessionDecider);

const sessionId = '33333333-3333-4333-8333-333333333333';
const orderId = '44444444-4444-4444-8444-444444444444';
const line = { itemId: 'v1', productId: 'p1', name: 'Cup', sku: 'CUP', quantity: 2, unitPrice: '19.99', available: 5 };
const address = { name: 'Ada', line_one: '1 Road', city: 'Paris', state: 'IDF', country: 'FR', postal_code: '75001' };
const cart: Cart = {
  currency: 'EUR',
  lines: [line, { ...line, itemId: 'v2', name: 'Saucer', quantity: 1, unitPrice: '0.10' }],
  shippingOptions: [{ id: 'standard', title: 'Standard shipping', price: '4.90' }],
  selectedOptionId: null,
  fulfillmentDetails: null,
  buyer: null,
};
const ready: Cart = { ...cart, selectedOptionId: 'standard', fulfillmentDetails: JSON.stringify({ address }) };

const opened = (from: Cart): CheckoutSessionEvent =>
  given()
    .when({ type: 'OpenCheckoutSession', data: { sessionId, ...from } })
    .events()[0]!;
const started: CheckoutSessionEvent = {
  type: 'CheckoutCompletionStarted',
  data: { sessionId, orderId, attempt: 0, buyer: null, reservation: null },
};
const completed: CheckoutSessionEvent = { type: 'CheckoutSessionCompleted', data: { sessionId, orderId } };
const canceled: CheckoutSessionEvent = { type: 'CheckoutSessionCanceled', data: { sessionId } };
const refused = (current: string, requested: string): CheckoutSessionEvent =>
  ({
    type: 'CheckoutSessionChangeRefused',
    data: { sessionId, current, requested, reason: `a ${current} session cannot ${requested}` },
  }) as CheckoutSessionEvent;

describe('checkout session decider', () => {
  it('prices a new cart exactly as an order would, and is not ready without address and fulfillment option', () => {
    given()
      .when({ type: 'OpenCheckoutSession', data: { sessionId, ...cart } })
      .then([
        {
          type: 'CheckoutSessionOpened',
          data: { sessionId, ...cart, status: 'not_ready_for_payment', subtotal: '40.08', shippingTotal: '0.00', total: '40.08' },
        },
      ]);
  });

  it('is ready for payment once address and option are given, with the option priced in', () => {
    given([opened(cart)])
      .when({ type: 'ReviseCheckoutSession', data: { sessionId, ...ready } })
      .then([
        {
          type: 'CheckoutSessionRevised',
          data: { sessionId, ...ready, status: 'ready_for_payment', subtotal: '40.08', shippingTotal: '4.90', total: '44.98' },
        },
      ]);
  });

  it('is not ready while a line wants more than is in stock', () => {
    const short = { ...ready, lines: [{ ...line, quantity: 6 }] };
    expect(cartProblems(short)).toEqual([{ code: 'out_of_stock', param: '$.line_items[0]', content: 'only 5 of Cup in stock' }]);
    expect(
      given()
        .when({ type: 'OpenCheckoutSession', data: { sessionId, ...short } })
        .events()[0]?.data,
    ).toMatchObject({ status: 'not_ready_for_payment' });
  });

  it('refuses a cart out of bounds and a second open of the same session', () => {
    given()
      .when({ type: 'OpenCheckoutSession', data: { sessionId, ...cart, lines: [{ ...line, quantity: 0 }] } })
      .thenThrows(ValidationError);
    given([opened(cart)])
      .when({ type: 'OpenCheckoutSession', data: { sessionId, ...cart } })
      .thenThrows(ConflictError);
    given().when({ type: 'CancelCheckoutSession', data: { sessionId } }).thenThrows(NotFoundError);
  });

  it('completes a ready session through complete_in_progress, once, with the same order whatever the retries', () => {
    given([opened(ready)])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0 } })
      .then([started]);
    given([opened(ready), started])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0 } })
      .thenNothingHappened();
    given([opened(ready), started])
      .when({ type: 'CompleteCheckoutSession', data: { sessionId, orderId } })
      .then([completed]);
    given([opened(ready), started, completed])
      .when({ type: 'CompleteCheckoutSession', data: { sessionId, orderId } })
      .thenNothingHappened();
    given([opened(ready), started, completed])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0 } })
      .thenNothingHappened();
  });

  it('keeps the buyer sent with the completion, in place of the session’s', () => {
    const buyer = JSON.stringify({ email: 'ada@example.com', first_name: 'Ada' });
    const withBuyer = given([opened({ ...ready, buyer: JSON.stringify({ email: 'old@example.com' }) })])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0, buyer } })
      .events();
    expect(withBuyer).toEqual([{ type: 'CheckoutCompletionStarted', data: { sessionId, orderId, attempt: 0, buyer, reservation: null } }]);
    const after = [opened(ready), ...withBuyer].reduce(evolve, initialState());
    expect(after).toMatchObject({ status: 'Open', sessionStatus: 'complete_in_progress', cart: { buyer } });
    // None sent: the session's stays.
    const kept = [opened({ ...ready, buyer }), started].reduce(evolve, initialState());
    expect(kept).toMatchObject({ cart: { buyer } });
  });

  it('carries the stock to reserve ahead of the order, and refuses lines the inventory could not take', () => {
    const lines = [{ lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 2 }];
    given([opened(ready)])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0, reservation: lines } })
      .then([
        { type: 'CheckoutCompletionStarted', data: { sessionId, orderId, attempt: 0, buyer: null, reservation: JSON.stringify(lines) } },
      ]);
    const tooMany = Array.from({ length: 251 }, (_, lineIndex) => ({ ...lines[0]!, lineIndex, quantity: 1 }));
    for (const bad of [
      [],
      [{ ...lines[0]!, quantity: 0 }],
      [{ ...lines[0]!, quantity: 1.5 }],
      [{ ...lines[0]!, quantity: 1_000_001 }],
      tooMany,
    ])
      given([opened(ready)])
        .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0, reservation: bad } })
        .thenThrows(ValidationError);
  });

  it('records refused moves: completing a session not ready, changing or canceling a finished one', () => {
    given([opened(cart)])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId, attempt: 0 } })
      .then([refused('not_ready_for_payment', 'complete')]);
    given([opened(ready), started])
      .when({ type: 'CancelCheckoutSession', data: { sessionId } })
      .then([refused('complete_in_progress', 'cancel')]);
    given([opened(ready), started, completed])
      .when({ type: 'CancelCheckoutSession', data: { sessionId } })
      .then([refused('completed', 'cancel')]);
    given([opened(ready), canceled])
      .when({ type: 'ReviseCheckoutSession', data: { sessionId, ...ready } })
      .then([refused('canceled', 'revise')]);
    given([opened(ready), canceled])
      .when({ type: 'CancelCheckoutSession', data: { sessionId } })
      .thenNothingHappened();
    given([opened(ready)])
      .when({ type: 'CancelCheckoutSession', data: { sessionId } })
      .then([canceled]);
  });

  it('reopens a session whose order could not be placed, with the stock it met, and the next attempt is a new order', () => {
    const failed = given([opened(ready), started])
      .when({
        type: 'FailCheckoutCompletion',
        data: { sessionId, orderId, reason: 'out_of_stock', message: 'v1 short', stock: [{ itemId: 'v1', available: 1 }] },
      })
      .events();
    expect(failed).toEqual([
      {
        type: 'CheckoutCompletionFailed',
        data: {
          sessionId,
          orderId,
          reason: 'out_of_stock',
          message: 'v1 short',
          stock: [{ itemId: 'v1', available: 1 }],
          status: 'not_ready_for_payment',
        },
      },
    ]);
    const next = '55555555-5555-4555-8555-555555555555';
    given([opened(ready), started, ...failed])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId: next, attempt: 0 } })
      .then([refused('not_ready_for_payment', 'complete')]);
    given([
      opened(ready),
      started,
      ...failed,
      {
        type: 'CheckoutSessionRevised',
        data: { sessionId, ...ready, status: 'ready_for_payment', subtotal: '40.08', shippingTotal: '4.90', total: '44.98' },
      },
    ])
      .when({ type: 'StartCheckoutCompletion', data: { sessionId, orderId: next, attempt: 1 } })
      .then([{ type: 'CheckoutCompletionStarted', data: { sessionId, orderId: next, attempt: 1, buyer: null, reservation: null } }]);
  });

  it("records a completed session's order notice once, and none for a session not completed", () => {
    const notice = { sessionId, orderId, delivered: true, attempts: 2, detail: null };
    const recorded: CheckoutSessionEvent = { type: 'CheckoutOrderNoticeRecorded', data: notice };
    given([opened(ready), started, completed])
      .when({ type: 'RecordCheckoutOrderNotice', data: notice })
      .then([recorded]);
    given([opened(ready), started, completed, recorded])
      .when({ type: 'RecordCheckoutOrderNotice', data: notice })
      .thenNothingHappened();
    given([opened(ready), started])
      .when({ type: 'RecordCheckoutOrderNotice', data: notice })
      .thenNothingHappened();
  });

  it('records an order_update notice once per status of the completed order', () => {
    const notice = { sessionId, orderId, status: 'shipped', delivered: true, attempts: 1, detail: null };
    const recorded: CheckoutSessionEvent = { type: 'CheckoutOrderUpdateNoticeRecorded', data: notice };
    given([opened(ready), started, completed])
      .when({ type: 'RecordCheckoutOrderUpdateNotice', data: notice })
      .then([recorded]);
    given([opened(ready), started, completed, recorded])
      .when({ type: 'RecordCheckoutOrderUpdateNotice', data: notice })
      .thenNothingHappened();
    given([opened(ready), started, completed, recorded])
      .when({ type: 'RecordCheckoutOrderUpdateNotice', data: { ...notice, status: 'delivered' } })
      .then([{ type: 'CheckoutOrderUpdateNoticeRecorded', data: { ...notice, status: 'delivered' } }]);
  });

  it("sets the tenant's agent webhook and UCP order webhook, recording nothing when they are already so", () => {
    const data = { agentCheckoutId: 'a1', webhookUrl: 'https://agent.example.com/hooks' };
    const configured = { ...data, ucpOrderWebhookUrl: null };
    const settings = DeciderSpecification.for(agentCheckoutDecider);
    settings()
      .when({ type: 'ConfigureAgentCheckout', data })
      .then([{ type: 'AgentCheckoutConfigured', data: configured }]);
    settings([{ type: 'AgentCheckoutConfigured', data }])
      .when({ type: 'ConfigureAgentCheckout', data })
      .thenNothingHappened();
    // The UCP platform's webhook set; a later change of the agent's alone keeps it.
    const ucp = { ...data, ucpOrderWebhookUrl: 'https://platform.example/webhooks/ucp/orders' };
    settings([{ type: 'AgentCheckoutConfigured', data: configured }])
      .when({ type: 'ConfigureAgentCheckout', data: ucp })
      .then([{ type: 'AgentCheckoutConfigured', data: ucp }]);
    settings([{ type: 'AgentCheckoutConfigured', data: ucp }])
      .when({ type: 'ConfigureAgentCheckout', data: { ...data, webhookUrl: null } })
      .then([{ type: 'AgentCheckoutConfigured', data: { ...ucp, webhookUrl: null } }]);
    settings([{ type: 'AgentCheckoutConfigured', data: ucp }])
      .when({ type: 'ConfigureAgentCheckout', data: { ...data, ucpOrderWebhookUrl: null } })
      .then([{ type: 'AgentCheckoutConfigured', data: configured }]);
  });

  it('charges only prices its currency states exactly in minor units', () => {
    expect(exactMinorUnits('19.99', 'EUR')).toBe(1999);
    expect(exactMinorUnits('1500', 'JPY')).toBe(1500);
    expect(exactMinorUnits('19.995', 'EUR')).toBeUndefined();
    expect(exactMinorUnits('1.5', 'JPY')).toBeUndefined();
  });
});
