/** CSRF on hosted pages: a double-submit token keyed by the CSRF cookie, plus an Origin check. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkCsrfToken, cookieNames, cookieOptions, crossOrigin, csrfToken, newCsrfSecret } from '../../screens/cookies.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';

/** The CSRF form token of this browser, setting its CSRF cookie when there is none. */
export function csrfFor(request: FastifyRequest, reply: FastifyReply): string {
  const issuer = tenantOf(request).issuer;
  const name = cookieNames(issuer).csrf;
  let secret = request.cookies[name];
  if (!secret || secret.length !== 43) {
    secret = newCsrfSecret();
    reply.setCookie(name, secret, cookieOptions(issuer));
  }
  return csrfToken(secret);
}

/** A form post must come from this origin and carry the token bound to the CSRF cookie. */
export function csrfOk(request: FastifyRequest): boolean {
  const issuer = tenantOf(request).issuer;
  const origin = request.headers.origin;
  if (crossOrigin(typeof origin === 'string' ? origin : undefined, issuer)) return false;
  return checkCsrfToken(request.cookies[cookieNames(issuer).csrf], field(request.body, 'csrf_token'));
}
