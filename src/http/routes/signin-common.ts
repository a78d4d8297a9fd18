/** Fastify helpers shared by the sign-in bindings: page headers, cookies, CSRF, session, outcomes. */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.js';
import type { Outcome } from '../../oauth/authorize/engine.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { OrganizationRepo } from '../../storage/repos/organizations.js';
import { type Brand, brandOf, DEFAULT_BRAND } from '../../screens/brand.js';
import { checkCsrfToken, cookieNames, cookieOptions, crossOrigin, csrfToken, newCsrfSecret } from '../../screens/cookies.js';
import type { Html } from '../../screens/html.js';
import { errorPage, type PageFrame } from '../../screens/pages.js';
import { tenantOf } from '../tenant.js';

export type Form = Record<string, string | string[] | undefined>;

/** One form or query value (a repeated one counts as absent). */
export function field(source: unknown, name: string): string | undefined {
  const v = (source as Form | undefined)?.[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A CSP source for a URL: its origin, or its scheme for custom-scheme (native app) redirects. */
const originOf = (url: string) => {
  try {
    const u = new URL(url);
    if (u.origin !== 'null') return u.origin;
    return /^[a-z][a-z0-9+.-]*:$/i.test(u.protocol) && !['javascript:', 'data:', 'blob:', 'file:'].includes(u.protocol) ? u.protocol : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Strict CSP per page: nothing but the page's own nonce'd style, the brand logo, and forms that
 * post here (and, for flows, the client's redirect origin, which Chrome checks on the redirect
 * after a form post). Never framed.
 */
function securityHeaders(reply: FastifyReply, nonce: string, brand: Brand, formTargets: string[]): void {
  const logo = brand.logoUrl ? originOf(brand.logoUrl) : undefined;
  const targets = [...new Set(formTargets.map(originOf).filter((o): o is string => o !== undefined))];
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `img-src ${logo ?? "'none'"}`,
    `form-action 'self'${targets.map((t) => ` ${t}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  reply
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store');
}

export interface PageOptions {
  title: string;
  brand?: Brand;
  /** Origins the page's forms may end up at (after redirects). */
  formTargets?: string[];
}

/** Renders a page with its headers; `body` builds the HTML from the frame (for its CSP nonce). */
export function sendPage(reply: FastifyReply, status: number, o: PageOptions, body: (f: PageFrame) => Html): FastifyReply {
  const nonce = randomBytes(16).toString('base64url');
  const brand = o.brand ?? DEFAULT_BRAND;
  securityHeaders(reply, nonce, brand, o.formTargets ?? []);
  return reply.code(status).type('text/html; charset=utf-8').send(body({ title: o.title, brand, nonce }).value);
}

export function sendError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return sendPage(reply, status, { title: 'Error' }, (f) => errorPage(f, error, description));
}

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

/** A form post must come from this origin and carry the token bound to the CSRF cookie; else 403. */
export function csrfOk(request: FastifyRequest): boolean {
  const issuer = tenantOf(request).issuer;
  const origin = request.headers.origin;
  if (crossOrigin(typeof origin === 'string' ? origin : undefined, issuer)) return false;
  return checkCsrfToken(request.cookies[cookieNames(issuer).csrf], field(request.body, 'csrf_token'));
}

export function rejectCsrf(reply: FastifyReply): FastifyReply {
  return sendError(reply, 403, 'csrf_failed', 'This form has expired or did not come from this site. Go back, reload the page and try again.');
}

export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[cookieNames(tenantOf(request).issuer).session];
}

export async function currentSession(ctx: Context, request: FastifyRequest): Promise<SessionRecord | undefined> {
  return ctx.signin.service.current(tenantOf(request).id, sessionToken(request));
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  const issuer = tenantOf(request).issuer;
  reply.setCookie(cookieNames(issuer).session, token, cookieOptions(issuer, maxAgeSeconds));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const issuer = tenantOf(request).issuer;
  reply.clearCookie(cookieNames(issuer).session, cookieOptions(issuer));
}

export async function brandFor(ctx: Context, tenantId: string, organizationId: string | null | undefined): Promise<Brand> {
  if (!organizationId) return DEFAULT_BRAND;
  return brandOf(await new OrganizationRepo(ctx.db.kysely).find(tenantId, organizationId));
}

/** Sends an authorization outcome: 303 to the client, the login or consent page, or an error page. */
export function sendOutcome(reply: FastifyReply, outcome: Outcome): FastifyReply {
  switch (outcome.kind) {
    case 'redirect':
      return reply.code(303).header('location', outcome.location).send();
    case 'login':
      return reply.code(303).header('location', `/login?flow=${encodeURIComponent(outcome.flow)}`).send();
    case 'consent':
      return reply.code(303).header('location', `/login/consent?flow=${encodeURIComponent(outcome.flow)}`).send();
    case 'error':
      return sendError(reply, 400, outcome.error, outcome.description);
  }
}
