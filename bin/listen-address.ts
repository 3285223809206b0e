import { createServer } from 'node:net';
import { reasonOf, StartupError } from '../ledger/startup-error.ts';

/** Why the service cannot listen on HOST:PORT, as the one line a start failure is. */
export const cannotListen = (host: string, port: number, error: unknown): StartupError =>
  new StartupError(`cannot listen on ${host}:${port} (HOST, PORT): ${reasonOf(error)}`, { cause: error });

/**
 * Fails at once when HOST:PORT cannot be listened on (another instance holds it), rather than after the service has
 * joined its consumer groups and restored its state. Port 0 (any free one) always can.
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
    });
  } catch (error) {
    throw cannotListen(host, port, error);
  }
}
