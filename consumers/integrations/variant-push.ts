import type { PushedVariant } from '../../commands/integrations/item-push.ts';
import { productReference, type PlatformVariant } from './commerce-item.ts';
import { ProviderError, REFERENCE_SLUG, type ConnectionProvider, type RemoteItemVariant } from '../../adapters/provider/provider.ts';

/**
 * An item's variants on the platform, kept as its itemvariants. Every variant carries its reference
 * (`cl:<product>/<variant>`), so a create whose answer was lost is found again rather than made twice: whenever the
 * recorded ids cannot be trusted to be complete (an item found again by its reference, a variant not recorded, a
 * recorded one the platform no longer has), the item's variants are listed once and matched by reference.
 */

export type VariantTarget = {
  /** The platform's item id. */
  itemId: string;
  productId: string;
  /** The variants recorded by the last successful push of this item; undefined when none can be trusted. */
  known: PushedVariant[] | undefined;
};

const variantPrefix = (productId: string): string => `${productReference(productId)}/`;

/** Our variant id that a platform's variant carries as its reference, when it is one of the product's. */
function ourVariantId(variant: RemoteItemVariant, productId: string): string | undefined {
  const prefix = variantPrefix(productId);
  const reference = variant.metadata?.find((m) => m?.slug === REFERENCE_SLUG)?.value;
  return typeof reference === 'string' && reference.startsWith(prefix) ? reference.slice(prefix.length) : undefined;
}

/** Ours (by reference) among the platform's variants: our variant id to its id, and the extra copies of any of them. */
function oursAmong(remote: RemoteItemVariant[], productId: string): { byVariant: Map<string, string>; copies: string[] } {
  const byVariant = new Map<string, string>();
  const copies: string[] = [];
  for (const variant of remote) {
    const variantId = ourVariantId(variant, productId);
    if (variantId === undefined) continue;
    if (byVariant.has(variantId)) copies.push(variant.id);
    else byVariant.set(variantId, variant.id);
  }
  return { byVariant, copies };
}

const isNotFound = (error: unknown): boolean => error instanceof ProviderError && error.kind === 'not_found';

/**
 * Creates or updates each wanted variant of the item and deletes ours that are no longer wanted (or were made twice).
 * `fresh`: the item was created by this push, so it has no variants yet and nothing needs looking up.
 */
export async function pushVariants(
  provider: ConnectionProvider,
  connection: string,
  target: VariantTarget & { fresh: boolean },
  wanted: PlatformVariant[],
): Promise<PushedVariant[]> {
  const recorded = new Map((target.known ?? []).map((v) => [v.variantId, v.remoteId]));
  const strays = new Set<string>();
  let listed: Map<string, string> | undefined;
  const lookUp = async (): Promise<Map<string, string>> => {
    if (!listed) {
      const ours = oursAmong(await provider.listItemVariants(connection, target.itemId), target.productId);
      listed = ours.byVariant;
      for (const copy of ours.copies) strays.add(copy);
      for (const [variantId, remoteId] of listed) {
        if (recorded.has(variantId) && recorded.get(variantId) !== remoteId) strays.add(remoteId);
        else recorded.set(variantId, remoteId);
      }
    }
    return listed;
  };
  if (!target.fresh && (target.known === undefined || wanted.some((v) => !recorded.has(v.variantId)))) await lookUp();

  const pushed: PushedVariant[] = [];
  for (const { variantId, body } of wanted) {
    const withItem = { ...body, items: [{ id: target.itemId }] };
    let remoteId = recorded.get(variantId);
    if (remoteId !== undefined) {
      try {
        await provider.updateItemVariant(connection, remoteId, withItem);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        // Gone from the platform: made again, unless an earlier attempt already did (its answer lost).
        strays.delete(remoteId);
        const again = listed ? undefined : (await lookUp()).get(variantId);
        remoteId = again !== undefined && again !== remoteId ? again : undefined;
        if (remoteId !== undefined) await provider.updateItemVariant(connection, remoteId, withItem);
      }
    }
    remoteId ??= (await provider.createItemVariant(connection, withItem)).id;
    pushed.push({ variantId, remoteId });
  }
  const wantedIds = new Set(wanted.map((v) => v.variantId));
  for (const [variantId, remoteId] of recorded) if (!wantedIds.has(variantId)) strays.add(remoteId);
  // What was pushed is never a stray, whatever a look-up during the pushes found.
  for (const { remoteId } of pushed) strays.delete(remoteId);
  for (const stray of strays) await provider.deleteItemVariant(connection, stray);
  return pushed;
}

/** Deletes our variants of the item (before the item itself): the recorded ones, or those its listing shows as ours. */
export async function removeVariants(provider: ConnectionProvider, connection: string, target: VariantTarget): Promise<void> {
  const ids =
    target.known?.map((v) => v.remoteId) ??
    (await provider.listItemVariants(connection, target.itemId))
      .filter((v) => ourVariantId(v, target.productId) !== undefined)
      .map((v) => v.id);
  for (const id of ids) await provider.deleteItemVariant(connection, id);
}
