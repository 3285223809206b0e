import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { z } from 'zod';
import type { BulkItemFailure, BulkJobType } from './bulk-job.ts';
import type { ProductCommand } from '../catalog/product.ts';
import type { SerializedDomainError } from '../../ledger/errors.ts';
import type { CommandInput, IdempotentRequest } from '../../ledger/message.ts';
import { bulkDeleteItem, bulkImportItem, bulkUpdateItem } from '../catalog/product-fields.ts';
import { uuid } from '../field-schemas.ts';

const PRODUCT_ID_NAMESPACE = 'a3f1c6de-2b4e-4f0a-9c57-8d2e6b1f4a90';
const COMMAND_ID_NAMESPACE = 'e0b7d9a4-51c3-4e8f-b6a2-7f93c0d15e28';
/** An item error's message is for people: long enough to name the field and the rule. */
const MESSAGE_LIMIT = 500;

/** An imported item's product id: the same for the same job and item, so a job run again creates nothing twice. */
export const importedProductId = (jobId: string, index: number): string => uuidv5(`${jobId}/${index}`, PRODUCT_ID_NAMESPACE);
export const itemCommandId = (jobId: string, index: number): string => uuidv5(`${jobId}/${index}`, COMMAND_ID_NAMESPACE);

/** What an item becomes: one product command (with what makes it safe to send again), or a failure found before sending. */
export type ItemPlan =
  | { kind: 'command'; index: number; productId: string; command: CommandInput<ProductCommand>; idempotency: IdempotentRequest }
  | { kind: 'failed'; failure: BulkItemFailure };

const failed = (index: number, code: string, message: string, productId: string | null = null): ItemPlan => ({
  kind: 'failed',
  failure: { index, code, message: message.slice(0, MESSAGE_LIMIT), productId },
});

const described = (error: z.ZodError) => error.issues.map((issue) => `${issue.path.join('.') || 'item'}: ${issue.message}`).join('; ');

const defined = (entries: Record<string, unknown>) => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));

/**
 * The item at `index` as the ordinary product command its job type makes of it, validated by the same field rules as
 * the single-item endpoints. The command is idempotent under a key of job and item, so sending it again after a crash
 * is answered as the first time and applies nothing twice.
 */
export function planItem(jobType: BulkJobType, jobId: string, index: number, item: unknown): ItemPlan {
  // A job's items never change, so the key (job and item) names one request: the job's id serves as its hash.
  const keyed = (productId: string, command: CommandInput<ProductCommand>): ItemPlan => ({
    kind: 'command',
    index,
    productId,
    command,
    idempotency: { key: `bulk:${jobId}:${index}`, requestHash: jobId },
  });
  switch (jobType) {
    case 'BULK_IMPORT': {
      const parsed = bulkImportItem.safeParse(item);
      const productId = importedProductId(jobId, index);
      if (!parsed.success) {
        const missingTitle = parsed.error.issues.some((i) => i.path[0] === 'title' && i.code === 'invalid_type' && !hasTitle(item));
        return failed(index, missingTitle ? 'MISSING_TITLE' : 'INVALID_FIELD', described(parsed.error));
      }
      const { title, description = null, category = null, sku, brand } = parsed.data;
      return keyed(productId, { type: 'CreateProduct', data: { productId, title, description, category, ...defined({ sku, brand }) } });
    }
    case 'BULK_UPDATE': {
      const parsed = bulkUpdateItem.safeParse(item);
      if (!parsed.success) return failed(index, 'INVALID_FIELD', described(parsed.error), idOf(item));
      const { id: productId, ...changes } = parsed.data;
      return keyed(productId, { type: 'UpdateProduct', data: { productId, ...defined(changes) } });
    }
    case 'BULK_DELETE': {
      const parsed = bulkDeleteItem.safeParse(item);
      if (!parsed.success) return failed(index, 'INVALID_FIELD', described(parsed.error), idOf(item));
      return keyed(parsed.data.id, { type: 'DeleteProduct', data: { productId: parsed.data.id } });
    }
    default: {
      const exhaustive: never = jobType;
      throw new Error(`unknown job type ${String(exhaustive)}`);
    }
  }
}

const hasTitle = (item: unknown) => typeof item === 'object' && item !== null && 'title' in item && item.title !== undefined;

/** The item's id if it has one that is a UUID (a failure names the product it was about, when it names one). */
const idOf = (item: unknown): string | null => {
  const id = typeof item === 'object' && item !== null && 'id' in item ? item.id : undefined;
  return uuid.safeParse(id).success ? String(id).toLowerCase() : null;
};

/** A product command the product aggregate refused, as the item's failure. */
export const refusedItem = (index: number, productId: string, error: SerializedDomainError): BulkItemFailure => {
  const code = { not_found: 'PRODUCT_NOT_FOUND', validation: 'INVALID_FIELD', conflict: 'CONFLICT', internal: 'REJECTED' }[error.kind];
  const message = [error.message, ...error.details.map((d) => `${d.path} ${d.message}`)].join('; ');
  return { index, code, message: message.slice(0, MESSAGE_LIMIT), productId };
};
