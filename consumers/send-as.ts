import type { Aggregate } from '../ledger/aggregate.ts';
import type { CommandBus } from '../ledger/command-bus.ts';
import type { CommandReply } from '../ledger/command-reply.ts';
import type { Actor, Command, CommandInput, Event, IdempotentRequest } from '../ledger/message.ts';

/** Whose behalf a worker acts on: the tenant and org of the record it works on, and who asked for it. */
export type Owner = { tenant_id: string; org_id: string; actor: Actor };

export class Refused extends Error {}

export type SendOptions = {
  correlationId: string;
  idempotency?: IdempotentRequest;
  commandId?: string;
  /** false: a refusal is returned for the caller to judge instead of thrown. */
  refusalThrows?: boolean;
};

/** Sends a command as the owner and waits for its decision; a refusal throws (`Refused`) unless the caller judges it. */
export async function sendAs<C extends Command, E extends Event, S>(
  bus: CommandBus,
  owner: Owner,
  aggregate: Aggregate<C, E, S>,
  { type, data }: CommandInput<NoInfer<C>>,
  { correlationId, idempotency, commandId = crypto.randomUUID(), refusalThrows = true }: SendOptions,
): Promise<Extract<CommandReply, { outcome: 'accepted' | 'rejected' }>> {
  const metadata = {
    commandId,
    tenantId: owner.tenant_id,
    orgId: owner.org_id,
    actor: owner.actor,
    issuedAt: Date.now(),
    correlationId,
    ...(idempotency ? { idempotency } : {}),
  };
  const reply = await bus.send(aggregate.commands, aggregate.aggregateIdOf({ data }), { type, data, metadata } as Command);
  if (reply.outcome === 'ping') throw new Error('unexpected reply');
  if (reply.outcome === 'rejected' && refusalThrows) throw new Refused(`${type} refused: ${reply.error.message}`);
  return reply;
}
