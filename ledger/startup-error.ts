/**
 * A start-up failure the operator can act on (a setting that does not parse, a dependency that cannot be reached): its
 * message is one line naming the setting and what was tried, and the process prints that line alone, not a stack.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** A connection string fit for a message: the password (if any) replaced by `***`. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    // not a URL: keep it short and drop anything that looks like user:password@
    return raw.replace(/\/\/[^@/]*@/, '//***@').slice(0, 200);
  }
}

/** What went wrong, in one line: an error's message and its causes' (or the parts of an AggregateError), no stack. */
export function reasonOf(error: unknown, depth = 0): string {
  if (!(error instanceof Error)) return oneLine(String(error));
  const code = (error as { code?: unknown }).code;
  let message = error.message || (error instanceof AggregateError ? '' : typeof code === 'string' ? code : error.name);
  if (error instanceof AggregateError && error.errors.length > 0 && depth < 3) {
    const reasons = [...new Set(error.errors.map((inner: unknown) => reasonOf(inner, depth + 1)))];
    // "metadata failed 4 times." says little: what each attempt met says why.
    message = message ? `${message}: ${reasons.join('; ')}` : reasons.join('; ');
  }
  if (error.cause !== undefined && depth < 3) {
    const cause = reasonOf(error.cause, depth + 1);
    if (cause && !message.includes(cause)) message = message ? `${message}: ${cause}` : cause;
  }
  return oneLine(message);
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();
