import { inspect } from 'node:util';
import { expect } from 'vitest';
import type { Command, CommandMetadata, Decider, Event } from '../../ledger/message.ts';
import { metadata as testMetadata } from './command-metadata.ts';

/** A command as a test writes it: the metadata is the fixed test metadata unless the command brings its own. */
export type WithoutMetadata<C extends Command> = C extends Command ? Omit<C, 'metadata'> & { metadata?: CommandMetadata } : never;

type ErrorClass<T extends Error> = new (...args: any[]) => T;

export type Decision<E extends Event> = {
  then: (expected: E[]) => void;
  thenNothingHappened: () => void;
  /** `check` may assert (with `expect`) or answer: `false` fails the test. */
  thenThrows: <T extends Error>(errorClass: ErrorClass<T>, check?: (error: T) => boolean | void) => void;
  /** The decided events themselves, where a list of expected events cannot say it (a count, part of an event), or to feed the next decision. */
  events: () => E[];
};

export type Given<C extends Command, E extends Event, S> = (events?: E[]) => {
  when: (command: WithoutMetadata<C>) => Decision<E>;
  /** Decides each command on the state the ones before it left, as a router feeds an aggregate: the events of each, and the final state. */
  whenInTurn: (commands: WithoutMetadata<C>[]) => { events: E[][]; state: S };
};

// Failures inside a loop would otherwise not say which command failed.
const describeCommand = (command: Omit<Command, 'metadata'>) =>
  `when ${command.type} ${inspect(command.data, { depth: 3, maxArrayLength: 4, breakLength: Infinity })}`;

const thrownBy = (decide: () => unknown): unknown => {
  try {
    decide();
  } catch (error) {
    return error;
  }
  return undefined;
};

/** Given events, when a command, then events or an error: the shape of emmett's `DeciderSpecification`. */
export const DeciderSpecification = {
  for:
    <C extends Command, E extends Event, S>(decider: Decider<C, E, S>): Given<C, E, S> =>
    (events = []) => {
      const stamped = (command: WithoutMetadata<C>) => ({ metadata: testMetadata, ...command }) as C;
      return {
        when: (command) => {
          const decide = () => decider.decide(stamped(command), events.reduce(decider.evolve, decider.initialState()));
          const label = describeCommand(command);
          return {
            then: (expected) => expect(decide(), label).toEqual(expected),
            thenNothingHappened: () => expect(decide(), label).toEqual([]),
            thenThrows: (errorClass, check) => {
              expect(decide, label).toThrow(errorClass);
              if (check?.(thrownBy(decide) as never) === false) expect.fail(`${label}: the ${errorClass.name} does not pass the check`);
            },
            events: decide,
          };
        },
        whenInTurn: (commands) => {
          let state = events.reduce(decider.evolve, decider.initialState());
          const decided: E[][] = [];
          for (const command of commands) {
            const next = decider.decide(stamped(command), state);
            decided.push(next);
            state = next.reduce(decider.evolve, state);
          }
          return { events: decided, state };
        },
      };
    },
};
