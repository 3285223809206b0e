import { DEFAULT_STAND_IN_TOKEN, DEFAULT_WORKSPACE_SECRET, startUnifiedStandIn, STAND_IN_HEADER, STAND_IN_PROBE_PATH } from './stand-in.ts';

/** The stand-in a development instance talks to: served by this process (`owned`), or by another one on the same port. */
export type SharedStandIn = { url: string; owned: boolean; workspaceSecret: string; close(): Promise<void> };

/** How long an occupied port may take to say whether it is a stand-in. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Serves the stand-in on `port`, or, when the port is taken by a stand-in that accepts `token` (another `npm start` of
 * the same machine), uses that one: instances of one ledger must see the same provider, whose connections live in the
 * memory of the process that serves it. Anything else on the port, or a stand-in that refuses the token, is an error
 * whose message says which.
 */
export async function serveOrReuseStandIn(options: {
  port: number;
  host?: string;
  token?: string;
  workspaceSecret?: string;
}): Promise<SharedStandIn> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? DEFAULT_STAND_IN_TOKEN;
  try {
    const standIn = await startUnifiedStandIn({ port: options.port, host, token, workspaceSecret: options.workspaceSecret });
    return { url: standIn.url, owned: true, workspaceSecret: standIn.workspaceSecret, close: () => standIn.close() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  }
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${options.port}`;
  const answer = await fetch(`${url}${STAND_IN_PROBE_PATH}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  }).catch(() => undefined);
  await answer?.body?.cancel();
  if (!answer?.headers.has(STAND_IN_HEADER)) {
    throw new Error(
      `${host}:${options.port} (UNIFIED_STAND_IN_PORT) is in use by something that is not the stand-in: set UNIFIED_STAND_IN_PORT to a free port, or UNIFIED_API_URL to the provider`,
    );
  }
  if (!answer.ok)
    throw new Error(`the stand-in on ${url} refuses this UNIFIED_API_TOKEN (${answer.status}): give every instance the same one`);
  // Instances started alike share the workspace secret the other one signs its native deliveries with.
  return { url, owned: false, workspaceSecret: options.workspaceSecret ?? DEFAULT_WORKSPACE_SECRET, close: async () => undefined };
}
