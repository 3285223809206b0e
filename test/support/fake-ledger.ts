import type { Knex } from 'knex';
import type { DependencyName } from '../../ledger/dependencies.ts';
import { UnavailableError } from '../../ledger/dependencies.ts';
import type { IdempotentRequest, LogPosition } from '../../ledger/message.ts';
import { ProjectionLagError } from '../../ledger/projection-waiter.ts';
import type { Readiness } from '../../ledger/readiness.ts';
import type { AwaitOutcome, Dispatch, Execute, LedgerFacade } from '../../http/ledger-facade.ts';
import { fixtureDb, type FixtureTables } from './fixture-db.ts';

/** A command as a route sent it, with the scope its request gave it. */
export type SentCommand = {
  aggregate: string;
  type: string;
  data: Record<string, unknown>;
  tenantId: string;
  orgId: string;
  idempotency?: IdempotentRequest;
  /** false for a dispatch (202): nobody waits for its decision. */
  awaited: boolean;
};

/**
 * What the ledger decided about a command: accepted, with the read-model rows its events project to (each replaces
 * the row of its table with the same id, or is added), or `replayed` (a retry of an accepted request: nothing
 * appended); or refused with the domain error (or an outage) the route then sees.
 */
export type Decision = { rows?: FixtureTables; replayed?: boolean } | Error;

/**
 * The ledger's boundary in memory, for route tests with `inject`: reads answer from `tables`, a command is recorded
 * in `sent` and answered with what `decide` says, and a dependency in `down` is refused at once (503) as the
 * dependency monitor's circuit refuses it, before any command is sent.
 */
export class FakeLedger implements LedgerFacade {
  readonly sent: SentCommand[] = [];
  readonly down = new Set<DependencyName>();
  readonly db: Knex;
  /** Accepts every command and projects nothing unless a test says otherwise. */
  decide: (command: SentCommand) => Decision = () => ({});
  /** While set, every command waits for it before it is decided: requests a test holds in progress. */
  held?: Promise<void>;
  private appended = 0;

  readonly tables: FixtureTables;

  constructor(tables: FixtureTables = {}) {
    this.tables = tables;

    this.db = fixtureDb(tables);
  }

  /** A fresh start for the next test: nothing sent, nothing down, `decide` as given, the named tables empty. */
  reset(decide: FakeLedger['decide'], ...emptyTables: string[]): void {
    this.sent.length = 0;
    this.down.clear();
    this.held = undefined;
    this.decide = decide;
    for (const table of emptyTables) this.tables[table] = [];
  }

  require = (...dependencies: DependencyName[]): void => {
    const missing = dependencies.find((dependency) => this.down.has(dependency));
    if (missing) throw new UnavailableError(missing);
  };

  execute: Execute = async (request, aggregate, { type, data }, idempotency, options) => {
    this.require(...(options?.until === 'committed' ? (['kafka'] as const) : (['kafka', 'postgres'] as const)));
    const command = this.record(request.principal, aggregate.name, type, data, true, idempotency);
    await this.held;
    const decision = this.decide(command);
    if (decision instanceof Error) throw decision;
    for (const [table, rows] of Object.entries(decision.rows ?? {})) for (const row of rows) this.project(table, row);
    const positions: LogPosition[] = decision.replayed
      ? []
      : [{ topic: aggregate.events.name, partition: 0, offset: String(this.appended++) }];
    return { positions };
  };

  dispatch: Dispatch = async (request, aggregate, { type, data }) => {
    this.require('kafka');
    this.record(request.principal, aggregate.name, type, data, false);
  };

  /** The decision projected its rows when it was made: the outcome is there now, or it is as late as the real wait's timeout says. */
  awaitOutcome: AwaitOutcome = async (_projection, read) => {
    const found = await read();
    if (found === undefined) throw new ProjectionLagError('the read model has not shown the outcome yet');
    return found;
  };

  readiness = (): Readiness => {
    const checks = Object.fromEntries(
      (['kafka', 'registry', 'postgres'] as const).map((name) => [name, { ok: !this.down.has(name), since: new Date(0).toISOString() }]),
    );
    const failing = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name]) => name);
    return { ready: failing.length === 0, failing, checks };
  };

  private record(
    { tenantId, orgId }: { tenantId: string; orgId: string },
    aggregate: string,
    type: string,
    data: unknown,
    awaited: boolean,
    idempotency?: IdempotentRequest,
  ): SentCommand {
    const command = {
      aggregate,
      type,
      data: data as Record<string, unknown>,
      tenantId,
      orgId,
      awaited,
      ...(idempotency ? { idempotency } : {}),
    };
    this.sent.push(command);
    return command;
  }

  private project(table: string, row: Record<string, unknown>): void {
    const rows = (this.tables[table] ??= []);
    const at = rows.findIndex((existing) => existing.id !== undefined && existing.id === row.id);
    if (at >= 0) rows[at] = row;
    else rows.push(row);
  }
}
