/** The browser session cookie of hosted pages (names and attributes: src/screens/cookies.ts). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { cookieNames, cookieOptions } from '../../screens/cookies.js';
import type { SigninService } from '../../screens/service.js';
import { tenantOf } from '../tenant.js';

export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[cookieNames(tenantOf(request).issuer).session];
}

/** The live session this browser's cookie names, if any. */
export function currentSession(signin: Pick<SigninService, 'current'>, request: FastifyRequest): Promise<SessionRecord | undefined> {
  return signin.current(tenantOf(request).id, sessionToken(request));
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  const issuer = tenantOf(request).issuer;
  reply.setCookie(cookieNames(issuer).session, token, cookieOptions(issuer, maxAgeSeconds));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const issuer = tenantOf(request).issuer;
  reply.clearCookie(cookieNames(issuer).session, cookieOptions(issuer));
}
