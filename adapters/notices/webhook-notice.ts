import { isIP } from 'node:net';
import { isPrivateAddress, publicOnlyLookup } from './public-address.ts';
import { backoffDelayMs, defaultBackoff, messageOf, pause, type Backoff, type NoticeOutcome } from './notice-delivery.ts';
import { webhookNoticeHeaders, type NoticeSecrets } from './webhook-signature.ts';

export { webhookSignature, type NoticeSecrets } from './webhook-signature.ts';
export type { NoticeOutcome } from './notice-delivery.ts';

/** How an attempt is signed: Standard Webhooks' headers, or a protocol's own. */
type NoticeSigning =
  | {
      /** The tenant's `whsec_` notice secrets: the current one, then the previous one while its grace lasts. */
      secrets: NoticeSecrets;
    }
  | {
      /** A protocol's own signature headers for an attempt (ACP's `Merchant-Signature`, UCP's RFC 9421 signature). */
      signedHeaders: (rawBody: string, timestamp: number) => Record<string, string>;
    };

export type WebhookNotice = NoticeSigning & {
  url: string;
  /** The JSON text to send, exactly as signed (`noticeBody(notice)`). */
  body: string;
  /** The notice's id (the export's): the same on every attempt, so the receiver can dedupe. */
  id: string;
  /** How long one attempt may take, connecting and answering. Default 10 s. */
  timeoutMs?: number;
  /** Attempts in all, the first included. Default 6. */
  attempts?: number;
  backoff?: Backoff;
  /** Stops waiting and attempting (a shutdown): the outcome is then not delivered. */
  signal?: AbortSignal;
  fetchImpl?: typeof fetch;
  /** Lets notices reach loopback and private addresses (development and tests); by default only public hosts. */
  allowPrivateNetworks?: boolean;
};

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_ATTEMPTS = 6;

/** Why a URL cannot receive notices, or undefined when it can: an absolute http(s) URL without credentials. */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `only http(s) URLs receive notices, not ${parsed.protocol}`;
  if (parsed.username || parsed.password) return 'a notice URL carries no credentials (the signature authenticates)';
  return undefined;
}

/** The wait a 429 or 503 asks for (`Retry-After`: seconds or an HTTP date), in ms; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** 5xx and 429 may pass; any other answer will be the same next time. */
const retryable = (status: number) => status === 429 || status >= 500;

type Attempt = { delivered: true; status: number } | { delivered: false; status?: number; error: string; retry: boolean; waitMs?: number };

/**
 * Connects only to public addresses, checked at the connection's own name resolution. undici is loaded at the first
 * notice (about 5 MB of heap in every process that sends none).
 */
let publicFetching: Promise<typeof fetch> | undefined;
const publicFetch = (): Promise<typeof fetch> =>
  (publicFetching ??= import('undici').then(({ Agent, fetch: undiciFetch }) => {
    const publicOnly = new Agent({ connect: { lookup: publicOnlyLookup } });
    return ((input: string, init: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher: publicOnly })) as unknown as typeof fetch;
  }));

/** Why the URL's host is refused before any connection (an address literal in a private range), or undefined. */
function privateHostProblem(url: string): string | undefined {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a local name; notices go to public hosts`;
  return isIP(host) !== 0 && isPrivateAddress(host) ? `${host} is a private address; notices go to public hosts` : undefined;
}

async function attempt(notice: WebhookNotice, fetchImpl: typeof fetch): Promise<Attempt> {
  const timestamp = Math.floor(Date.now() / 1000);
  const timeout = AbortSignal.timeout(notice.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = notice.signal ? AbortSignal.any([notice.signal, timeout]) : timeout;
  try {
    const response = await fetchImpl(notice.url, {
      method: 'POST',
      headers: {
        ...('signedHeaders' in notice
          ? { 'content-type': 'application/json', ...notice.signedHeaders(notice.body, timestamp) }
          : webhookNoticeHeaders(notice.secrets, notice.id, notice.body, timestamp)),
        'user-agent': 'commerce-ledger-notices/1',
      },
      body: notice.body,
      // A redirect is not followed: the receiver configured this URL, and following could send the notice anywhere.
      redirect: 'manual',
      signal,
    });
    // The answer's body is not read; cancelling frees the connection.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { delivered: true, status: response.status };
    const waitMs = retryAfterMs(response.headers.get('retry-after'));
    return { delivered: false, status: response.status, error: `HTTP ${response.status}`, retry: retryable(response.status), waitMs };
  } catch (error) {
    const timedOut = timeout.aborted && !notice.signal?.aborted;
    const refused = (error as { cause?: { code?: string } }).cause?.code === 'EPRIVATEADDRESS';
    return {
      delivered: false,
      error: timedOut ? `no answer within ${notice.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : messageOf(error),
      retry: !refused,
    };
  }
}

/**
 * POSTs a notice, signed afresh on each attempt, until a 2xx answers or the attempts run out. Network errors, timeouts,
 * 5xx and 429 are retried after an exponential backoff with jitter (or the `Retry-After` asked for, capped by
 * `backoff.maxMs`); any other answer (4xx, 3xx) is final. Never throws for a failed delivery.
 */
export async function sendWebhookNotice(notice: WebhookNotice): Promise<NoticeOutcome> {
  const problem = webhookUrlProblem(notice.url) ?? (notice.allowPrivateNetworks ? undefined : privateHostProblem(notice.url));
  if (problem) return { delivered: false, attempts: 0, error: `refused ${JSON.stringify(notice.url)}: ${problem}` };
  const attempts = Math.max(1, notice.attempts ?? DEFAULT_ATTEMPTS);
  const backoff = notice.backoff ?? defaultBackoff;
  const fetchImpl = notice.fetchImpl ?? (notice.allowPrivateNetworks ? fetch : await publicFetch());
  let made = 0;
  for (;;) {
    if (notice.signal?.aborted) return { delivered: false, attempts: made, error: 'aborted' };
    made += 1;
    const result = await attempt(notice, fetchImpl);
    if (result.delivered) return { delivered: true, attempts: made, status: result.status };
    const outcome = { delivered: false, attempts: made, error: result.error, ...(result.status ? { status: result.status } : {}) };
    if (!result.retry || made >= attempts) return outcome;
    const waitMs = Math.min(backoff.maxMs, result.waitMs ?? backoffDelayMs(made, backoff));
    if (!(await pause(waitMs, notice.signal))) return { ...outcome, error: `aborted after ${result.error}` };
  }
}
