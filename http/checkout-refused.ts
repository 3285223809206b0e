/**
 * A checkout operation refused for a reason the agent can act on (an item not for sale, a session in the wrong
 * status, stock that ran short), told in the checkout's own terms: `code`, a sentence, and `param`, the JSONPath of
 * what it is about. Each protocol's edge answers it in its own error shape (http/acp-edge.ts, http/ucp-edge.ts).
 */
export class CheckoutRefused extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly param?: string;
  readonly type: 'invalid_request' | 'processing_error' | 'service_unavailable';

  constructor(
    statusCode: number,
    code: string,
    message: string,
    param?: string,
    type: 'invalid_request' | 'processing_error' | 'service_unavailable' = 'invalid_request',
  ) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.param = param;
    this.type = type;
  }
}
