import { ABANDONED, completeSession, failCompletion, withdrawOrder } from '../../commands/acp/checkout-completion.ts';
import { checkoutSessionAggregate } from '../../commands/acp/checkout-session.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { ItemQueue } from '../../ledger/item-queue.ts';
import type { Worker } from '../../ledger/runtime.ts';
import { sendCommand, SYSTEM_ACTOR, type CommandOwner } from '../../ledger/send-command.ts';
import { defineWorker, type WorkerContext, type WorkerHooks } from '../../ledger/worker.ts';
import { stalledCompletions, type CheckoutSessionRow } from '../../projections/checkout/checkout-queries.ts';
import { stockOf } from '../../projections/checkout/checkout-stock.ts';
import { findDecidedOrder, findOrder, findReservationAhead } from '../../projections/oms/oms-queries.ts';

export type CompletionSweeperOptions = {
  /** CHECKOUT_COMPLETION_TIMEOUT_SECONDS, in ms: how long a started completion may stay unfinished. */
  afterMs: number;
  atOnce: number;
};

/**
 * Ends every checkout completion that was started and left unfinished (the service or the agent's connection died
 * between its steps, and the agent never completed again), so stock reserved ahead never stays held without an order.
 * A session `complete_in_progress` for longer than the bound is taken to where the edge would have taken it:
 * - its order placed: once decided, the session is completed with it (confirmed) or failed (rejected), as the edge does;
 * - no stock asked, or the inventory refused it: the attempt fails, nothing is held;
 * - the stock held and no order: the order cannot be placed from here (the delegated payment is the agent's request's,
 *   not the session's), so its id is withdrawn (`WithdrawOrder`: the order's single writer refuses it once the order is
 *   placed, and otherwise releases the held stock once and refuses any later PlaceOrder), then the attempt fails.
 * The sweeper decides nothing itself: each step is a command its aggregate decides once, so restarts, several
 * instances and a concurrent agent retry reach one outcome. The steps are the edge's (commands/acp/checkout-completion.ts).
 */
class CompletionSweeper {
  private readonly context: WorkerContext;
  private readonly options: CompletionSweeperOptions;

  constructor(context: WorkerContext, options: CompletionSweeperOptions) {
    this.context = context;
    this.options = options;
  }

  hooks(): WorkerHooks {
    return new ItemQueue(this.context, 'completion-sweeper', this.options.atOnce, {
      queue: (limit) => stalledCompletions(this.context.deps.db, new Date(Date.now() - this.options.afterMs), limit),
      keyOf: (row) => `${row.id}/${row.order_id}`,
      ownerOf: (row) => row.tenant_id,
      work: (row) => this.work(row),
    }).hooks({});
  }

  /** True once the session's completion has ended (completed or failed); false: a step is still to be decided, look later. */
  private async work(row: CheckoutSessionRow): Promise<boolean> {
    const { db, bus } = this.context.deps;
    const orderId = row.order_id;
    if (!orderId) return true;
    const scope = { tenantId: row.tenant_id, orgId: row.org_id };
    const owner: CommandOwner = { ...scope, actor: SYSTEM_ACTOR };
    const options = { correlationId: row.id };
    const log = { sessionId: row.id, orderId, tenantId: row.tenant_id };
    const fail = async (reason: string) => {
      const { command } = failCompletion(row, orderId, reason, await stockOf(db, scope, row.cart));
      await sendCommand(bus, owner, checkoutSessionAggregate, command, options);
      this.context.log.info({ ...log, reason }, 'an unfinished checkout completion failed');
      return true;
    };

    if (await findOrder(db, scope, orderId)) {
      const order = await findDecidedOrder(db, scope, orderId);
      if (!order) return false;
      if (order.status === 'rejected') return fail(order.rejection?.reason ?? 'rejected');
      const { command, retry } = completeSession(row.id, orderId);
      await sendCommand(bus, owner, checkoutSessionAggregate, command, { ...options, idempotency: retry });
      this.context.log.info(log, 'an unfinished checkout completion completed with its order');
      return true;
    }
    if (!row.reservation) return fail('out_of_stock');
    const reservation = await findReservationAhead(db, orderId);
    if (!reservation) return false;
    if (reservation.status === 'refused') return fail('out_of_stock');
    const withdrawal = await sendCommand(bus, owner, orderAggregate, withdrawOrder(orderId, row.reservation), {
      ...options,
      refusalThrows: false,
    });
    // Placed meanwhile (an agent's retry): its outcome ends the completion, on a later round or at the edge.
    if (withdrawal.outcome === 'rejected') return false;
    // Failed once the release shows in the levels, so the session records the stock as it is.
    if (reservation.status !== 'released') return false;
    return fail(ABANDONED);
  }
}

export const completionSweeper = (options: CompletionSweeperOptions): Worker =>
  defineWorker({
    name: 'completion-sweeper',
    component: 'completion-sweeper',
    source: { kind: 'queue', wokenBy: [], idlePollMs: Math.min(5_000, Math.max(250, Math.floor(options.afterMs / 4))) },
    hooks: (context) => new CompletionSweeper(context, options).hooks(),
  });
