import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** `path`: the request target as received (path and query). */
export type ReceivedHook = { method: string; path: string; headers: IncomingHttpHeaders; body: string; at: number };
export type ReceivedMail = { from: string; to: string[]; raw: string };

/** A real HTTP receiver on a port of its own: answers with the scripted statuses in turn (200 once they run out). */
export async function startHookReceiver() {
  const received: ReceivedHook[] = [];
  const script: number[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { method = '', url = '', headers } = request;
      received.push({ method, path: url, headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      response.writeHead(script.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/hooks/exports') => `http://127.0.0.1:${port}${path}`,
    received,
    script,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A real SMTP server in process (the smtp-server package): no TLS, no authentication; keeps every raw message. */
export async function startMailReceiver() {
  const mails: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const { port } = smtp.server.address() as AddressInfo;
  return { smtpUrl: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}

/** Undoes quoted-printable soft breaks and escapes, enough to find a link or a number in a raw message. */
export const plainText = (raw: string): string =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Whether the Standard Webhooks reference library (the receiver's side) accepts a delivery: the signature of its id,
 * timestamp and raw body under the `whsec_` secret, and the timestamp within 5 minutes of the clock.
 */
export function standardWebhookVerifies(secret: string, headers: IncomingHttpHeaders | Record<string, string>, rawBody: string): boolean {
  const single = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  try {
    new Webhook(secret).verify(rawBody, single);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}
