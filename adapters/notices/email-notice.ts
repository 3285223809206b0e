import type { ExportNotice } from './export-notice.ts';
import { backoffDelayMs, messageOf, pause, type Backoff, type NoticeOutcome } from './notice-delivery.ts';

export type { NoticeOutcome } from './notice-delivery.ts';

export type EmailNotice = {
  /** `SMTP_URL` (smtp:// or smtps://, credentials and options in the URL as nodemailer reads them); unset: skipped. */
  smtpUrl: string | undefined;
  /** `NOTICE_FROM`. */
  from: string;
  to: string | string[];
  notice: ExportNotice;
  /** How long connecting, the greeting and each reply may take. Default 10 s. */
  timeoutMs?: number;
  /** Attempts in all; only failures that may pass (no connection, a 4xx reply) are tried again. Default 3. */
  attempts?: number;
  backoff?: Backoff;
  signal?: AbortSignal;
};

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_ATTEMPTS = 3;
const emailBackoff: Backoff = { baseMs: 2_000, maxMs: 30_000 };

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** Subject, plain text and HTML of a notice: the facts of its data, the download link on a line of its own. */
export function emailOfNotice({ data }: ExportNotice): { subject: string; text: string; html: string } {
  if (data.status === 'FAILED') {
    const lines = [
      `Catalog export ${data.export_id} failed.`,
      '',
      `Reason: ${data.error ?? 'unknown'}`,
      '',
      'Request a new export to try again.',
    ];
    return {
      subject: `Catalog export failed (${data.export_id})`,
      text: `${lines.join('\n')}\n`,
      html: `<p>Catalog export <code>${escapeHtml(data.export_id)}</code> failed.</p><p>Reason: ${escapeHtml(data.error ?? 'unknown')}</p><p>Request a new export to try again.</p>`,
    };
  }
  const facts: [string, string][] = [
    ['Products exported', String(data.product_count)],
    ['Of which drafts', String(data.draft_count)],
    ['Left out (open ERROR validation issues)', String(data.excluded_count)],
    ['Link valid until', data.download_expires_at ?? ''],
  ];
  const url = data.download_url ?? '';
  const text = [
    `Catalog export ${data.export_id} is ready.`,
    '',
    ...facts.map(([label, value]) => `${label}: ${value}`),
    '',
    'Download (gzip-compressed JSON lines):',
    url,
    ...(data.manifest_url ? ['', 'Manifest:', data.manifest_url] : []),
  ];
  const rows = facts.map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('');
  const manifest = data.manifest_url ? `<p><a href="${escapeHtml(data.manifest_url)}">Manifest</a></p>` : '';
  return {
    subject: `Catalog export ready: ${data.product_count} products`,
    text: `${text.join('\n')}\n`,
    html: `<p>Catalog export <code>${escapeHtml(data.export_id)}</code> is ready.</p><table>${rows}</table><p><a href="${escapeHtml(url)}">Download the export</a></p>${manifest}`,
  };
}

type SmtpError = Error & { responseCode?: number; permanent?: boolean };

/** Sends a notice by email. Never throws for a failed delivery; an unset `smtpUrl` skips it (the caller warns). */
export async function sendEmailNotice(email: EmailNotice): Promise<NoticeOutcome> {
  if (!email.smtpUrl) return { delivered: false, attempts: 0, skipped: true, error: 'SMTP_URL is not set: email notices are skipped' };
  const timeoutMs = email.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Loaded at the first email (about 5 MB of heap in every process that sends none).
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    url: email.smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const { subject, text, html } = emailOfNotice(email.notice);
  // The notice's id names the message, so a receiving system can tell a resend of the same notice.
  const message = { from: email.from, to: email.to, subject, text, html, messageId: `<${email.notice.id}.export-notice@commerce-ledger>` };
  const attempts = Math.max(1, email.attempts ?? DEFAULT_ATTEMPTS);
  try {
    for (let made = 1; ; made += 1) {
      try {
        await transport.sendMail(message);
        return { delivered: true, attempts: made };
      } catch (caught) {
        const error = caught as SmtpError;
        const outcome = {
          delivered: false,
          attempts: made,
          error: messageOf(error),
          ...(error.responseCode ? { status: error.responseCode } : {}),
        };
        if (error.permanent === true || made >= attempts) return outcome;
        if (!(await pause(backoffDelayMs(made, email.backoff ?? emailBackoff), email.signal))) return outcome;
      }
    }
  } finally {
    transport.close();
  }
}
