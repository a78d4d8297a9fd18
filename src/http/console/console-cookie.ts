/**
 * The console's own cookie (docs/console.md "Signing in"): `SameSite=Strict`, HttpOnly, host-only
 * (`__Host-` and Secure on https issuers), minted when a signed-in browser loads a /console page
 * or completes the setup link, and required by every /console/api route but the setup link's.
 *
 * The hosted session cookie has to stay `SameSite=Lax` (OAuth redirects back from other sites
 * must carry it), so on its own it would also ride on a top-level navigation from another site.
 * This cookie is never sent on any request another site starts, so a console API request
 * needs both. Its value is an HMAC keyed by the session token (which only this browser holds;
 * the server keeps only its hash): it is bound to that one session, ends with it (logout, a new
 * login, revocation), needs no storage, and cannot be forged by anyone who lacks the token.
 */
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../kernel/crypto/hash.js';
import { errors } from '../../kernel/errors.js';
import { tenantOf } from '../tenant.js';

const secureIssuer = (issuer: string) => issuer.startsWith('https://');

/** `__Host-keyhall_console` on https issuers (the prefix demands Secure, no Domain and Path=/). */
export const consoleCookieName = (issuer: string) => `${secureIssuer(issuer) ? '__Host-' : ''}keyhall_console`;

/** The value bound to a session token. */
export const consoleCookieValue = (sessionToken: string) => createHmac('sha256', sessionToken).update('keyhall:console:v1').digest('base64url');

/** Whether this request carries the console cookie of the session token it presents (constant time). */
export function consoleCookieOk(request: FastifyRequest, sessionToken: string | undefined): boolean {
  const presented = request.cookies[consoleCookieName(tenantOf(request).issuer)];
  if (!sessionToken || !presented) return false;
  return safeEqual(consoleCookieValue(sessionToken), presented);
}

/** Sets the console cookie for this session token (same lifetime as the session cookie). */
export function setConsoleCookie(request: FastifyRequest, reply: FastifyReply, sessionToken: string, maxAgeSeconds: number): void {
  const issuer = tenantOf(request).issuer;
  reply.setCookie(consoleCookieName(issuer), consoleCookieValue(sessionToken), {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: secureIssuer(issuer),
    maxAge: maxAgeSeconds,
  });
}

/**
 * The check of every console API route but the setup link's: the session cookie alone (which is
 * SameSite=Lax) is not enough; 401 login_required sends the app through a page load again.
 */
export function requireConsoleCookie(request: FastifyRequest, sessionToken: string | undefined): void {
  if (!consoleCookieOk(request, sessionToken)) throw errors.loginRequired('this browser has no console cookie for its session: open /console/ again');
}
