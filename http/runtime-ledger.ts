import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { LedgerConfig } from '../ledger/config.ts';
import { deserializeDomainError } from '../ledger/errors.ts';
import { logEnds } from '../ledger/kafka.ts';
import type { LogPosition } from '../ledger/message.ts';
import type { Runtime } from '../ledger/runtime.ts';
import { namespaced, type TopicSpec } from '../ledger/topics.ts';
import type { AwaitOutcome, Dispatch, Execute, LedgerFacade } from './ledger-facade.ts';

/**
 * The routes' ledger over the running runtime. `execute` sends a command to its aggregate's single writer,
 * turns a rejection into the domain error, and returns only once the live read models show the write.
 */
export function runtimeLedger(runtime: Runtime, config: LedgerConfig): LedgerFacade {
  const metadataOf = (request: FastifyRequest) => {
    const { tenantId, orgId, actor } = request.principal;
    return { commandId: randomUUID(), tenantId, orgId, actor, issuedAt: Date.now(), correlationId: String(request.id) };
  };
  /**
   * Where an events log ends now: everything written to it, committed or not (its high watermark). A replayed request's
   * original is committed once its reply comes, but the broker writes the commit markers after it answers EndTxn, so
   * the last stable offset may not cover the original yet (a replay seen answering from a read model without it); the
   * read models pass a transaction's records only once it has ended, so this waits for the original, and for any
   * transaction open below it to end.
   */
  const logEnd = async (events: TopicSpec): Promise<LogPosition[]> => {
    const topic = namespaced(config.LEDGER_NAMESPACE, events.name);
    const admin = runtime.kafka.admin();
    await admin.connect();
    try {
      return [...(await logEnds(admin, topic, { written: true }))]
        .filter(([, end]) => end > 0n)
        .map(([partition, end]) => ({ topic, partition, offset: (end - 1n).toString() }));
    } finally {
      await admin.disconnect();
    }
  };
  const execute: Execute = async (request, aggregate, { type, data }, idempotency, options) => {
    const untilCommitted = options?.until === 'committed';
    runtime.dependencies.require(...(untilCommitted ? (['kafka'] as const) : (['kafka', 'postgres'] as const)));
    const metadata = { ...metadataOf(request), ...(idempotency ? { idempotency } : {}) };
    const reply = await runtime.bus.send(aggregate.commands, aggregate.aggregateIdOf({ data }), { type, data, metadata });
    if (reply.outcome === 'rejected') throw deserializeDomainError(reply.error);
    if (reply.outcome !== 'accepted') return { positions: [] };
    // The reply is written in the processor's transaction, so reading it (read_committed) means the events are committed.
    if (untilCommitted) return { positions: reply.positions };
    // A retry of an accepted request writes nothing, and its original's events may not be in the read models yet
    // (that is why the client retried): wait for everything the log holds now, the original included.
    const replayed = idempotency && reply.positions.length === 0;
    // An offset the processor could not learn (-1): wait for everything the log holds now, which includes it.
    const unknown = reply.positions.some((position) => BigInt(position.offset) < 0n);
    const positions = replayed || unknown ? await logEnd(aggregate.events) : reply.positions;
    // Kafka or Postgres may have gone away while the command was decided: their failAll has passed, so refuse now rather
    // than wait for the timeout (the check and the wait's registration run in the same tick).
    runtime.dependencies.require('kafka', 'postgres');
    await runtime.waiter.waitFor(positions, config.COMMAND_TIMEOUT_MS);
    return { positions: reply.positions };
  };
  const dispatch: Dispatch = async (request, aggregate, { type, data }) => {
    runtime.dependencies.require('kafka');
    await runtime.bus.post(aggregate.commands, aggregate.aggregateIdOf({ data }), { type, data, metadata: metadataOf(request) });
  };
  const awaitOutcome: AwaitOutcome = async (projection, read, wait) => {
    // Registered in the tick of the check, as execute's wait: Postgres gone since then fails the watch (failAll).
    runtime.dependencies.require('postgres');
    return runtime.waiter.waitUntil(projection, read, config.COMMAND_TIMEOUT_MS, wait);
  };
  return {
    db: runtime.db,
    execute,
    dispatch,
    awaitOutcome,
    require: (...dependencies) => runtime.dependencies.require(...dependencies),
    readiness: runtime.readiness,
  };
}
