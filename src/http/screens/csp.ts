/**
 * Hosted pages are sent with a strict per-page Content-Security-Policy and are never framed, in
 * the language the request asks for (src/screens/i18n): the flow's `ui_locales`, then
 * `Accept-Language`, then the tenant's default, with the tenant's own texts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBase64url } from '../../kernel/ids.js';
import { type Brand, DEFAULT_BRAND } from '../../screens/brand.js';
import type { Html } from '../../screens/html.js';
import { type MessageKey, negotiateLocale, NO_TENANT_TEXTS, type TenantTexts, type Translator, translator, type Vars } from '../../screens/i18n/index.js';
import type { PageFrame } from '../../screens/pages.js';

/** Where the hosted pages find a tenant's default locale and texts (the composition root decorates the app with it). */
export interface PageTextsSource {
  texts(tenantId: string): Promise<TenantTexts>;
}

declare module 'fastify' {
  interface FastifyInstance {
    pageTexts: PageTextsSource;
  }
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
  reply.header('content-security-policy', csp).header('x-frame-options', 'DENY').header('referrer-policy', 'same-origin').header('cache-control', 'no-store');
}

export interface PageOptions {
  /** The title's message (and its placeholders). */
  title: MessageKey;
  titleVars?: Vars;
  /** The flow's `ui_locales` (OIDC Core §3.1.2.1), when the page belongs to one. */
  uiLocales?: readonly string[] | null;
  brand?: Brand;
  /** Origins the page's forms may end up at (after redirects). */
  formTargets?: string[];
  /** The page uses /webauthn.js. */
  script?: boolean;
}

/** The translator of a page for this request: its language and the tenant's texts (none on a tenant-less request). */
export async function pageTranslator(request: FastifyRequest, uiLocales?: readonly string[] | null): Promise<Translator> {
  const texts = request.tenant ? await request.server.pageTexts.texts(request.tenant.id) : NO_TENANT_TEXTS;
  const acceptLanguage = request.headers['accept-language'];
  const locale = negotiateLocale({
    uiLocales,
    acceptLanguage: typeof acceptLanguage === 'string' ? acceptLanguage : undefined,
    tenantDefault: texts.defaultLocale,
  });
  return translator(locale, texts);
}

/** Renders a page with its headers; `body` builds the HTML from the frame (its CSP nonce, its texts). */
export async function sendPage(reply: FastifyReply, status: number, o: PageOptions, body: (f: PageFrame) => Html): Promise<FastifyReply> {
  const t = await pageTranslator(reply.request, o.uiLocales);
  const nonce = randomBase64url(16);
  const brand = o.brand ?? DEFAULT_BRAND;
  securityHeaders(reply, nonce, brand, o.formTargets ?? [], o.script === true);
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-language', t.locale)
    .header('vary', 'Accept-Language')
    .send(body({ title: t(o.title, o.titleVars), brand, nonce, t }).value);
}
