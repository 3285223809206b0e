import { randomBytes } from 'node:crypto';
import type { CommandReply } from './command-reply.ts';

/**
 * Replies for this process's own command bus, handed over without a record: `address` is what the bus names in a
 * command's `replyTo`, `deliver` takes a committed round's replies to it.
 */
export type LocalReplies = { address: string; deliver: (replies: CommandReply[]) => void };

/**
 * The process's reply address, made at start (so a restarted process is another address: a command an earlier
 * process sent is answered on the replies topic, where nobody waits for it any more), and the bus it hands over to once
 * that bus has started.
 */
export class ReplyHandover implements LocalReplies {
  readonly address = randomBytes(9).toString('base64url');
  private receiver?: (replies: CommandReply[]) => void;

  readonly deliver = (replies: CommandReply[]): void => this.receiver?.(replies);

  receiveWith(receiver: (replies: CommandReply[]) => void): void {
    this.receiver = receiver;
  }
}
