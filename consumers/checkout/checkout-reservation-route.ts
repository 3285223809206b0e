import { checkoutSessionAggregate, type CheckoutCompletionStarted } from '../../commands/acp/checkout-session.ts';
import { inventoryAggregate, inventoryIdOf, type ReservationLine } from '../../commands/oms/inventory.ts';
import { routeTo, type EventRoute } from '../../ledger/event-router.ts';
import type { RecordedEvent } from '../../ledger/message.ts';

/**
 * An agentic checkout's completion reserves its stock before its order exists: the reservation the session recorded
 * (`CheckoutCompletionStarted.reservation`, decided once by the session's single writer, whichever request sent it)
 * becomes one `ReserveStock` with `reservedAhead`, under the order's id, exactly once (a transactional router, as the
 * order pipeline's). The inventory remembers nothing for it; its outcome is in the oms read model's reservations.
 */
export const checkoutReservationRoute: EventRoute = {
  name: 'checkout-reservation',
  topics: [checkoutSessionAggregate.events],
  route: (recorded) => {
    if (recorded.type !== 'CheckoutCompletionStarted') return [];
    const { orderId, reservation } = (recorded as RecordedEvent<CheckoutCompletionStarted>).data;
    if (!reservation) return [];
    // The decider wrote it from lines it checked: JSON of whole-unit lines.
    const lines = JSON.parse(reservation) as ReservationLine[];
    const inventoryId = inventoryIdOf(recorded.envelope.tenantId, recorded.envelope.orgId);
    return [routeTo(inventoryAggregate, { type: 'ReserveStock', data: { inventoryId, orderId, lines, reservedAhead: true } })];
  },
};
