import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { z } from 'zod';
import { VerifiedTokens } from './verified-tokens.ts';
import type { Actor } from '../../ledger/message.ts';
import { ValidationError } from '../../ledger/errors.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';

export type Principal = { tenantId: string; orgId: string; actor: Actor & { userId: string } };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply?: FastifyReply) => Promise<void>;
  }
}

export type AuthOptions = { jwksUrl?: string; issuer?: string; audience?: string; devSecret?: string };

const guid = z.guid();
const claimsSchema = z.object({ sub: guid, email: z.email().optional(), tenant_id: guid, org_id: guid });

type KeySet = ReturnType<typeof createRemoteJWKSet>;

async function verify(token: string, options: AuthOptions, jwks: KeySet | undefined, devKey: CryptoKey | undefined): Promise<JWTPayload> {
  const verifyOptions: JWTVerifyOptions = { issuer: options.issuer, audience: options.audience, requiredClaims: ['exp'] };
  let algorithm: string | undefined;
  try {
    algorithm = decodeProtectedHeader(token).alg;
  } catch {
    throw new UnauthorizedError('the bearer token is not a JWT');
  }
  if (algorithm === 'HS256') {
    // Development mode only: symmetric tokens signed with AUTH_DEV_SECRET.
    if (!devKey) throw new UnauthorizedError('HS256 tokens are accepted only in development mode');
    return (await jwtVerify(token, devKey, { ...verifyOptions, algorithms: ['HS256'] })).payload;
  }
  if (!jwks) throw new UnauthorizedError('no JWKS is configured for asymmetric tokens');
  return (await jwtVerify(token, jwks, verifyOptions)).payload;
}

const headerValue = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Bearer JWT (JWKS, or HS256 in development mode) whose tenant and org must be the ones the request names. */
export const authPlugin = fp(
  async (app: FastifyInstance, options: AuthOptions) => {
    const jwks = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
    // Imported once: given the secret's bytes, jose imports a key at every request (72 -> 51 µs a verification).
    const devKey = options.devSecret
      ? await crypto.subtle.importKey('raw', new TextEncoder().encode(options.devSecret), { name: 'HMAC', hash: 'SHA-256' }, false, [
          'verify',
        ])
      : undefined;
    const verified = new VerifiedTokens();
    app.decorateRequest('principal', null as unknown as Principal);
    app.decorate('authenticate', async (request: FastifyRequest, reply?: FastifyReply) => {
      const authorization = headerValue(request, 'authorization');
      const match = authorization?.match(/^Bearer\s+(\S+)$/i);
      if (!match?.[1]) throw new UnauthorizedError('an Authorization: Bearer <token> header is required');
      const token = match[1];
      let payload = verified.get(token, Date.now());
      if (!payload) {
        try {
          payload = await verify(token, options, jwks, devKey);
        } catch (error) {
          if (error instanceof UnauthorizedError) throw error;
          const reason = error instanceof joseErrors.JWTExpired ? 'the token has expired' : 'the token is invalid';
          throw new UnauthorizedError(reason);
        }
        verified.remember(token, payload, Date.now());
      }
      const claims = claimsSchema.safeParse(payload);
      if (!claims.success) throw new UnauthorizedError('the token lacks the sub, tenant_id or org_id claim');

      const tenantId = headerValue(request, 'x-tenant-id');
      const orgId = headerValue(request, 'x-org-id');
      const problems = [
        ...(guid.safeParse(tenantId).success ? [] : [{ path: 'headers.x-tenant-id', message: 'a tenant UUID is required' }]),
        ...(guid.safeParse(orgId).success ? [] : [{ path: 'headers.x-org-id', message: 'an organization UUID is required' }]),
      ];
      if (problems.length > 0) throw new ValidationError('the standard headers are missing or malformed', problems);
      if (claims.data.tenant_id.toLowerCase() !== tenantId?.toLowerCase() || claims.data.org_id.toLowerCase() !== orgId?.toLowerCase()) {
        throw new ForbiddenError('the token is not linked to this tenant and organization');
      }
      request.principal = {
        tenantId: claims.data.tenant_id.toLowerCase(),
        orgId: claims.data.org_id.toLowerCase(),
        actor: { userId: claims.data.sub, email: claims.data.email ?? null, ip: request.ip },
      };
      // Every later line of this request (the route's, and fastify's "request completed") names its tenant and user.
      request.log = request.log.child({ tenant_id: request.principal.tenantId, user_id: request.principal.actor.userId });
      if (reply) reply.log = request.log;
    });
  },
  { name: 'auth' },
);
