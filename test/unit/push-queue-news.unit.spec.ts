import { describe, expect, it } from 'vitest';
import { pushQueueNews } from '../../consumers/integrations/push-worker.ts';

const connectionsTopic = 'ns.integrations.connection.events.v1';

describe("pushQueueNews: what a projection's progress means to the push worker", () => {
  it.each([
    ['the push queue applied a connection event, none active', 'push', connectionsTopic, false, { wake: true, connectionsChanged: true }],
    ['the push queue applied a connection event, one active', 'push', connectionsTopic, true, { wake: true, connectionsChanged: true }],
    [
      'the push queue applied product events, none active',
      'push',
      'ns.catalog.product.events.v1',
      false,
      { wake: false, connectionsChanged: false },
    ],
    [
      'the push queue applied product events, one active',
      'push',
      'ns.catalog.product.events.v1',
      true,
      { wake: true, connectionsChanged: false },
    ],
    [
      'the push queue applied outcomes, none active',
      'push',
      'ns.integrations.item-push.events.v1',
      false,
      { wake: false, connectionsChanged: false },
    ],
    [
      'the catalog applied products, none active',
      'catalog',
      'ns.catalog.product.events.v1',
      false,
      { wake: false, connectionsChanged: false },
    ],
    [
      'the catalog applied products, one active',
      'catalog',
      'ns.catalog.product.events.v1',
      true,
      { wake: true, connectionsChanged: false },
    ],
    [
      "another projection's connections topic is not the push queue's",
      'catalog',
      connectionsTopic,
      false,
      { wake: false, connectionsChanged: false },
    ],
  ])('%s', (_case, projection, topic, anyActive, expected) => {
    expect(pushQueueNews({ projection, topic, connectionsTopic, anyActive })).toEqual(expected);
  });
});
