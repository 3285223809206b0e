import type { Knex } from 'knex';
import type { PushAction, PushedVariant } from '../../commands/integrations/item-push.ts';
import { liveSchema } from '../../ledger/projection.ts';
import { catalogProjection } from '../../projections/catalog/catalog-projection.ts';
import { pushProjection } from '../../projections/integrations/push-projection.ts';

const push = liveSchema(pushProjection);
const catalog = liveSchema(catalogProjection);

/** An item the worker has leased: what to push, where, and what an earlier attempt may have left. */
export type ClaimedItem = {
  item_push_id: string;
  connection_id: string;
  unified_connection_id: string;
  product_id: string;
  tenant_id: string;
  org_id: string;
  desired_action: PushAction;
  desired_seq: string;
  remote_id: string | null;
  /** The item's variants on the platform, as the last successful push recorded them. */
  remote_variants: PushedVariant[];
  /** An earlier attempt may have created the remote item without our hearing of it: look it up before creating. */
  create_was_started: boolean;
};

/** Whether the push queue knows an active connection (only then can anything be due). */
export async function anyActiveConnection(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw(`select exists (select 1 from ??.connections where status = 'ACTIVE') as any`, [push])) as {
    rows: { any: boolean }[];
  };
  return rows[0]?.any ?? false;
}

/**
 * Leases due items of every active connection, up to `perConnection` less the calls `busy` says it has in flight
 * (a paused connection counts as full), so that one connection's backlog never fills a claim. Due: requested beyond
 * what was pushed, not dead-lettered, past its retry time and lease, and already in the catalog read model (a push
 * shows the product at least as of its request).
 * Marks a create as started before it is made: a crash after the platform's answer then leads to a lookup, not a
 * second item. SKIP LOCKED and the lease keep two workers off the same item. Each connection's due items are read
 * in index order (`items_due_per_connection`), so a claim costs its limit, not the backlog.
 */
export async function claimDueItems(
  db: Knex,
  { perConnection, busy, leaseMs }: { perConnection: number; busy: Record<string, number>; leaseMs: number },
) {
  const { rows } = (await db.raw(
    `with picked as (
       select due.item_push_id, due.create_started as create_was_started
       from ??.connections c
       left join jsonb_each_text(?::jsonb) busy on busy.key = c.id::text
       cross join lateral (
         select i.item_push_id, i.create_started
         from ??.items i
         where i.connection_id = c.id and i.desired_seq > i.pushed_seq and not i.dead_lettered
           and (i.next_attempt_at is null or i.next_attempt_at <= now())
           and (i.leased_until is null or i.leased_until < now())
           and exists (
             select 1 from ??.checkpoints k
             where k.topic = i.product_topic and k.partition = i.product_partition and k."offset" >= i.product_offset
           )
         order by i.next_attempt_at nulls first
         limit greatest(0, ? - coalesce(busy.value::int, 0))
         for update of i skip locked
       ) due
       where c.status = 'ACTIVE'
     ),
     leased as (
       update ??.items i
       set leased_until = now() + make_interval(secs => ?),
           create_started = i.create_started or (i.remote_id is null and i.desired_action = 'UPSERT')
       where i.item_push_id = any(array(select item_push_id from picked))
       returning i.item_push_id, i.connection_id, i.product_id, i.tenant_id, i.org_id, i.desired_action, i.desired_seq, i.remote_id,
                 i.remote_variants
     )
     select leased.*, c.unified_connection_id, picked.create_was_started
     from leased join picked using (item_push_id) join ??.connections c on c.id = leased.connection_id`,
    [push, JSON.stringify(busy), push, catalog, perConnection, push, leaseMs / 1000, push],
  )) as { rows: ClaimedItem[] };
  return rows;
}

/** Before a create the claim did not mark (an update found the remote item gone), mark it now. */
export const markCreateStarted = (db: Knex, itemPushId: string) =>
  db(`${push}.items`).where({ item_push_id: itemPushId }).update({ create_started: true });

export type ConnectionNeedingWebhooks = {
  id: string;
  unified_connection_id: string;
  tenant_id: string;
  org_id: string;
  subscribed: string[];
};

/** Active connections that lack some of the `wanted` webhook subscriptions (`<object_type>:<event>`). */
export async function connectionsNeedingWebhooks(db: Knex, wanted: string[]): Promise<ConnectionNeedingWebhooks[]> {
  const { rows } = (await db.raw(
    `select c.id, c.unified_connection_id, c.tenant_id, c.org_id,
            coalesce(array_agg(w.object_type || ':' || w.event) filter (where w.event is not null), '{}') as subscribed
     from ??.connections c left join ??.webhooks w on w.connection_id = c.id
     where c.status = 'ACTIVE'
     group by c.id
     having not (coalesce(array_agg(w.object_type || ':' || w.event) filter (where w.event is not null), '{}') @> ?::text[])`,
    [push, push, wanted],
  )) as { rows: ConnectionNeedingWebhooks[] };
  return rows;
}
