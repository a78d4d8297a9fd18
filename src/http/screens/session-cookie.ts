/** The browser session cookie of hosted pages (names and attributes: src/screens/cookies.ts). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { cookieNames, cookieOptions } from '../../screens/cookies.js';
import { browserBinding, type MfaService } from '../../screens/mfa/service.js';
import type { SigninService } from '../../screens/service.js';
import type { Browser } from '../../signin/engine.js';
import { tenantOf } from '../tenant.js';

export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[cookieNames(tenantOf(request).issuer).session];
}

/** What the sign-in engine knows of this browser: its address, user agent, and cookies. */
export function browserOf(request: FastifyRequest): Browser {
  const names = cookieNames(tenantOf(request).issuer);
  return {
    ip: request.ip,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
    sessionToken: request.cookies[names.session],
    ssoBinding: request.cookies[names.sso],
    webauthnBinding: browserBinding(request.cookies[names.csrf]),
  };
}

/** The live session this browser's cookie names, if any. */
export function currentSession(signin: Pick<SigninService, 'current'>, request: FastifyRequest): Promise<SessionRecord | undefined> {
  return signin.current(tenantOf(request).id, sessionToken(request));
}

/**
 * The session this browser may add a sign-in method with: a usable one, or a sign-in still owing
 * its second factor whose user has none yet (enrolling one is how it finishes). Undefined
 * otherwise. Shared by the hosted /mfa pages and the console's setup enrolment.
 */
export async function enrollingSession(
  signin: Pick<SigninService, 'current' | 'pending'>,
  mfa: Pick<MfaService, 'hasSecondFactor'>,
  request: FastifyRequest,
): Promise<{ session: SessionRecord; pending: boolean } | undefined> {
  const tenantId = tenantOf(request).id;
  const token = sessionToken(request);
  const session = await signin.current(tenantId, token);
  if (session) return { session, pending: false };
  const owing = await signin.pending(tenantId, token);
  if (!owing || (await mfa.hasSecondFactor(tenantId, owing.userId))) return undefined;
  return { session: owing, pending: true };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  const issuer = tenantOf(request).issuer;
  reply.setCookie(cookieNames(issuer).session, token, cookieOptions(issuer, maxAgeSeconds));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const issuer = tenantOf(request).issuer;
  reply.clearCookie(cookieNames(issuer).session, cookieOptions(issuer));
}
