import { defineAggregate } from '../../ledger/aggregate.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';
import { uuidv5 } from '../../ledger/uuid-v5.ts';

/**
 * A tenant's (tenant and org's) agentic checkout settings: where the agent platform receives order events (ACP's
 * order webhook) and where the UCP platform does (UCP's order webhook). One per tenant+org, keyed by UUIDv5 of both;
 * the same settings again record nothing.
 */
const AGENT_CHECKOUT_NAMESPACE = '8e1f4a27-3c6b-4d90-b5a2-7f0e9c3d1b64';
export const agentCheckoutIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, AGENT_CHECKOUT_NAMESPACE);

export type AgentCheckoutConfigured = Event<
  'AgentCheckoutConfigured',
  { agentCheckoutId: string; webhookUrl: string | null; ucpOrderWebhookUrl?: string | null }
>;
export type AgentCheckoutEvent = AgentCheckoutConfigured;

export type AgentCheckout = { webhookUrl: string | null; ucpOrderWebhookUrl: string | null };
export const initialState = (): AgentCheckout => ({ webhookUrl: null, ucpOrderWebhookUrl: null });

export const evolve = (state: AgentCheckout, event: AgentCheckoutEvent): AgentCheckout => {
  switch (event.type) {
    case 'AgentCheckoutConfigured':
      return { webhookUrl: event.data.webhookUrl, ucpOrderWebhookUrl: event.data.ucpOrderWebhookUrl ?? null };
    default: {
      const exhaustive: never = event.type;
      return exhaustive;
    }
  }
};

/** `ucpOrderWebhookUrl` left out keeps the one set before. */
export type ConfigureAgentCheckout = Command<'ConfigureAgentCheckout', AgentCheckoutConfigured['data']>;
export type AgentCheckoutCommand = ConfigureAgentCheckout;

export const decide = (command: AgentCheckoutCommand, state: AgentCheckout): AgentCheckoutEvent[] => {
  switch (command.type) {
    case 'ConfigureAgentCheckout': {
      const { agentCheckoutId, webhookUrl, ucpOrderWebhookUrl = state.ucpOrderWebhookUrl } = command.data;
      const same = webhookUrl === state.webhookUrl && ucpOrderWebhookUrl === state.ucpOrderWebhookUrl;
      return same ? [] : [{ type: 'AgentCheckoutConfigured', data: { agentCheckoutId, webhookUrl, ucpOrderWebhookUrl } }];
    }
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const agentCheckoutDecider: Decider<AgentCheckoutCommand, AgentCheckoutEvent, AgentCheckout> = { initialState, evolve, decide };

export const agentCheckoutAggregate = defineAggregate({
  name: 'agent-checkout',
  stream: 'acp.agent-checkout',
  decider: agentCheckoutDecider,
  id: 'agentCheckoutId',
  events: { namespace: 'commerce.ledger.acp', types: ['AgentCheckoutConfigured'] },
});
