import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

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

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      org: { type: 'string' },
      email: { type: 'string' },
      user: { type: 'string' },
      'expires-in': { type: 'string' },
    },
  });
  const secret = process.env.AUTH_DEV_SECRET ?? DEV_SECRET;
  const token = await devToken({
    secret,
    tenantId: values.tenant ?? randomUUID(),
    orgId: values.org ?? randomUUID(),
    email: values.email,
    userId: values.user,
    issuer: process.env.AUTH_ISSUER,
    audience: process.env.AUTH_AUDIENCE,
    expiresIn: values['expires-in'],
  });
  console.log(token);
}
