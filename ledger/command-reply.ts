import type { SerializedDomainError } from './errors.ts';
import type { LogPosition } from './message.ts';

/** What a command processor answers, on the private replies topic, once its transaction has committed. */
export type CommandReply =
  | { commandId: string; outcome: 'accepted'; aggregateId: string; positions: LogPosition[] }
  | { commandId: string; outcome: 'rejected'; error: SerializedDomainError }
  | { commandId: string; outcome: 'ping' };
