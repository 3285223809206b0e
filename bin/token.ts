import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { z } from 'zod';

/** The secret `npm start` uses when none is set; development only. */
export const DEV_SECRET = 'commerce-ledger-local-development-secret';

/** Development tokens: HS256 signed with AUTH_DEV_SECRET, accepted only when the service runs in development mode. */
export async function devToken(options: {
  secret: string;
  tenantId: string;
  orgId: string;
  userId?: string;
  email?: string;
  issuer?: string;
  audience?: string;
  expiresIn?: string;
}): Promise<string> {
  let jwt = new SignJWT({ tenant_id: options.tenantId, org_id: options.orgId, email: options.email ?? 'dev@example.com' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(options.userId ?? randomUUID())
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '12h');
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(options.secret));
}

const USAGE = `usage: npm run token -- [--tenant <uuid>] [--org <uuid>] [--email <address>] [--user <uuid>] [--expires-in <period>]

Prints a development token (HS256, signed with AUTH_DEV_SECRET, or the secret npm start uses when it is unset) for a
service in development mode. Send it as "Authorization: Bearer <token>", with the same tenant and org as X-Tenant-ID
and X-Org-ID.

  --tenant <uuid>        the tenant_id claim (invented when omitted, and printed on stderr)
  --org <uuid>           the org_id claim (invented when omitted, and printed on stderr)
  --email <address>      the email claim (default dev@example.com)
  --user <uuid>          the subject, the acting user (invented when omitted)
  --expires-in <period>  how long the token is valid, e.g. 30m, 12h, 7d (default 12h)
  -h, --help             this text

Exit codes: 0 printed, 2 usage error.`;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PERIOD =
  /^\d+(\.\d+)?\s?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks|y|yr|yrs|year|years)$/i;

/** `npm run token`: prints the token on stdout (and only it, for `TOKEN=$(…)`); what it invented and refusals on stderr. */
export async function tokenCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  let values: { tenant?: string; org?: string; email?: string; user?: string; 'expires-in'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        org: { type: 'string' },
        email: { type: 'string' },
        user: { type: 'string' },
        'expires-in': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    err(`npm run token: ${(error as Error).message}`);
    err('see npm run token -- --help');
    return 2;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  const problems = [
    ...(['tenant', 'org', 'user'] as const)
      .filter((name) => values[name] !== undefined && !GUID.test(values[name]))
      .map((name) => `--${name} must be a UUID (e.g. ${randomUUID()}), not ${JSON.stringify(values[name])}`),
    ...(values.email !== undefined && !z.email().safeParse(values.email).success
      ? [`--email must be an email address, not ${JSON.stringify(values.email)}`]
      : []),
    ...(values['expires-in'] !== undefined && !PERIOD.test(values['expires-in'])
      ? [`--expires-in must be a period such as 30m, 12h or 7d, not ${JSON.stringify(values['expires-in'])}`]
      : []),
  ];
  if (problems.length > 0) {
    for (const problem of problems) err(`npm run token: ${problem}`);
    err('see npm run token -- --help');
    return 2;
  }
  const tenantId = values.tenant ?? randomUUID();
  const orgId = values.org ?? randomUUID();
  if (!values.tenant) err(`no --tenant given: invented tenant ${tenantId} (send it as X-Tenant-ID)`);
  if (!values.org) err(`no --org given: invented org ${orgId} (send it as X-Org-ID)`);
  const token = await devToken({
    secret: env.AUTH_DEV_SECRET ?? DEV_SECRET,
    tenantId,
    orgId,
    email: values.email,
    userId: values.user,
    issuer: env.AUTH_ISSUER,
    audience: env.AUTH_AUDIENCE,
    expiresIn: values['expires-in'],
  });
  out(token);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await tokenCli(
    process.argv.slice(2),
    process.env,
    (line) => console.log(line),
    (line) => console.error(line),
  );
}
