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
    routes.map((route) => ({
      name: `${route.name}-router`,
      create: (signals) => new EventRouter(deps, routerOf(route, aggregates), signals),
    })),
  );
  return [...processors, ...routers];
}

/**
 * A route that the processors of `aggregates` run inline on every event of its topics leaves its router only the
 * events written before that (an upgrade's lag), which no request waits for: the router fetches in batches
 * (BATCHED_FETCH) rather than waking at every write to pass over marked records.
 */
export function routerOf(route: EventRoute, aggregates: readonly SomeAggregate[]): EventRoute {
  const written = new Set(
    aggregates.flatMap((aggregate) => [aggregate, ...(aggregate.followers ?? []).map((f) => f.aggregate)]).map((a) => a.events.name),
  );
  const inline = route.fetch !== 'batched' && route.topics.every((topic) => written.has(topic.name));
  return inline ? { ...route, fetch: 'batched' } : route;
}
