import type { SomeAggregate } from './aggregate.ts';
import { leadersOf } from './aggregate.ts';
import { CommandProcessor, type ProcessorDeps } from './command-processor.ts';
import { EventRouter, type EventRoute } from './event-router.ts';
import { Supervisor, type Part } from './supervisor.ts';

/** Parts of one kind are independent consumer groups, started side by side, each kept alive by its own supervisor. */
export async function startSupervised(
  deps: Pick<ProcessorDeps, 'logger'>,
  parts: { name: string; create: (signals: Supervisor) => Part }[],
): Promise<Supervisor[]> {
  return Promise.all(
    parts.map(async ({ name, create }) => {
      const supervisor = new Supervisor(name, deps.logger);
      await supervisor.start(create(supervisor));
      return supervisor;
    }),
  );
}

/**
 * The Kafka-to-Kafka parts: every leading aggregate's single writer, running the routes that read its events inline,
 * then the event routers (for events written before their routes ran inline, and routes no processor feeds).
 */
export async function startProcessorParts(
  deps: ProcessorDeps,
  aggregates: readonly SomeAggregate[],
  routes: readonly EventRoute[],
): Promise<Supervisor[]> {
  const processors = await startSupervised(
    deps,
    leadersOf(aggregates).map((definition) => ({
      name: `${definition.name}-processor`,
      create: (signals) => new CommandProcessor(deps, definition, signals, routes),
    })),
  );
  const routers = await startSupervised(
    deps,
    routes.map((route) => ({ name: `${route.name}-router`, create: (signals) => new EventRouter(deps, route, signals) })),
  );
  return [...processors, ...routers];
}
