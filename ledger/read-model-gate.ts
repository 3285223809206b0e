/**
 * A fact about a read model without which a queue worker has nothing to do (a connection is active, a checkout session
 * is completed), which only some projection's progress can change. The worker reads it when it may have changed and at
 * least every `pollMs` besides (a notification may be lost), and is woken by other progress only while it holds: a
 * service that never uses the feature does no queue work per write.
 */
export type GateFact = {
  read: () => Promise<boolean>;
  /** Whether this projection's progress on this topic (namespaced) may have changed the fact. */
  changedBy: (projection: string, topic: string) => boolean;
  pollMs: number;
  now?: () => number;
};

export class ReadModelGate {
  /** Until first read the fact is taken to hold: nothing is skipped on a guess. */
  private held = true;
  /** When it was last read; 0: read it again (it may have changed, or the read failed). */
  private readAt = 0;
  private readonly fact: GateFact;
  private readonly now: () => number;

  constructor(fact: GateFact) {
    this.fact = fact;
    this.now = fact.now ?? Date.now;
  }

  /** What a projection's progress means to the worker: `changed` has the fact read again at the next `holds`. */
  news(projection: string, topic: string): { wake: boolean; changed: boolean } {
    const changed = this.fact.changedBy(projection, topic);
    if (changed) this.readAt = 0;
    return { wake: changed || this.held, changed };
  }

  /** Whether the fact holds, read again if it may have changed or was last read a poll ago; a failed read throws. */
  async holds(): Promise<boolean> {
    if (this.readAt !== 0 && this.now() - this.readAt < this.fact.pollMs) return this.held;
    this.readAt = this.now();
    try {
      this.held = await this.fact.read();
    } catch (error) {
      this.readAt = 0;
      throw error;
    }
    return this.held;
  }

  /** A new incarnation of the worker reads the fact afresh. */
  forget(): void {
    this.readAt = 0;
  }
}
