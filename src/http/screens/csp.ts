/** Hosted pages are sent with a strict per-page Content-Security-Policy and are never framed. */
import type { FastifyReply } from 'fastify';
import { randomBase64url } from '../../kernel/ids.js';
import { type Brand, DEFAULT_BRAND } from '../../screens/brand.js';
import type { Html } from '../../screens/html.js';
import type { PageFrame } from '../../screens/pages.js';

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
 * Nothing but the page's own nonce'd style, the brand logo, and forms that post here (and, for
 * flows, the client's redirect origin, which Chrome checks on the redirect after a form post).
 */
function securityHeaders(reply: FastifyReply, nonce: string, brand: Brand, formTargets: string[], script: boolean): void {
  const logo = brand.logoUrl ? originOf(brand.logoUrl) : undefined;
  const targets = [...new Set(formTargets.map(originOf).filter((o): o is string => o !== undefined))];
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    // Pages with passkey buttons load /webauthn.js (same origin) and fetch their options here.
    ...(script ? ["script-src 'self'", "connect-src 'self'"] : []),
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
  /** The page uses /webauthn.js. */
  script?: boolean;
}

/** Renders a page with its headers; `body` builds the HTML from the frame (for its CSP nonce). */
export function sendPage(reply: FastifyReply, status: number, o: PageOptions, body: (f: PageFrame) => Html): FastifyReply {
  const nonce = randomBase64url(16);
  const brand = o.brand ?? DEFAULT_BRAND;
  securityHeaders(reply, nonce, brand, o.formTargets ?? [], o.script === true);
  return reply.code(status).type('text/html; charset=utf-8').send(body({ title: o.title, brand, nonce }).value);
}
