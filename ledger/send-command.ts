import type { Aggregate } from './aggregate.ts';
import type { CommandBus } from './command-bus.ts';
import type { CommandReply } from './command-reply.ts';
import type { Actor, Command, CommandInput, Event, IdempotentRequest } from './message.ts';

/** The actor of a command no person asked for: a worker's own decision (a retry, a subscription, a publication). */
export const SYSTEM_ACTOR: Actor = { userId: null, email: null, ip: null };

/** On whose behalf a worker sends: the tenant and org of the record it works on, and who asked (the system if nobody). */
export type CommandOwner = { tenantId: string; orgId: string; actor?: Actor };

/** The owner of a read-model row that records who asked for it (a bulk job, an export). */
export const ownerOfRow = (row: { tenant_id: string; org_id: string; actor: Actor }): CommandOwner => ({
  tenantId: row.tenant_id,
  orgId: row.org_id,
  actor: row.actor,
});

export class Refused extends Error {}

export type SendOptions = {
  correlationId?: string;
  idempotency?: IdempotentRequest;
  commandId?: string;
  /** false: a refusal is returned for the caller to judge instead of thrown. */
  refusalThrows?: boolean;
};

export type Decision = Extract<CommandReply, { outcome: 'accepted' | 'rejected' }>;

const commandOf = <C extends Command>(owner: CommandOwner, { type, data }: CommandInput<C>, options: SendOptions): Command => {
  const { correlationId = crypto.randomUUID(), idempotency, commandId = crypto.randomUUID() } = options;
  const metadata = {
    commandId,
    tenantId: owner.tenantId,
    orgId: owner.orgId,
    actor: owner.actor ?? SYSTEM_ACTOR,
    issuedAt: Date.now(),
    correlationId,
    ...(idempotency ? { idempotency } : {}),
  };
  return { type, data, metadata } as Command;
};

/** Sends a command as the owner and waits for its decision; a refusal throws (`Refused`) unless the caller judges it. */
export async function sendCommand<C extends Command, E extends Event, S>(
  bus: CommandBus,
  owner: CommandOwner,
  aggregate: Aggregate<C, E, S>,
  input: CommandInput<NoInfer<C>>,
  options: SendOptions = {},
): Promise<Decision> {
  const reply = await bus.send(aggregate.commands, aggregate.aggregateIdOf({ data: input.data }), commandOf(owner, input, options));
  if (reply.outcome === 'ping') throw new Error('unexpected reply');
  if (reply.outcome === 'rejected' && options.refusalThrows !== false) throw new Refused(`${input.type} refused: ${reply.error.message}`);
  return reply;
}

/** Sends a command as the owner without waiting for its decision, which reaches the worker through a read model. */
export async function postCommand<C extends Command, E extends Event, S>(
  bus: CommandBus,
  owner: CommandOwner,
  aggregate: Aggregate<C, E, S>,
  input: CommandInput<NoInfer<C>>,
): Promise<void> {
  await bus.post(aggregate.commands, aggregate.aggregateIdOf({ data: input.data }), commandOf(owner, input, {}));
}
