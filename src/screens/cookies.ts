/**
 * Cookie names and attributes. On an https issuer: `__Host-` prefix + Secure (host-only, Path=/,
 * no Domain, ASVS V3.3). On an http loopback issuer (development) browsers refuse both, so the
 * plain names without Secure are used; everything else is the same.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../kernel/crypto/hash.js';

export interface CookieOptions {
  path: '/';
  httpOnly: true;
  sameSite: 'lax';
  secure: boolean;
  maxAge?: number;
}

const secureIssuer = (issuer: string) => issuer.startsWith('https://');

/** `sso` binds an upstream SSO round trip to the browser that started it (docs/sso.md). */
export function cookieNames(issuer: string): { session: string; csrf: string; sso: string } {
  const prefix = secureIssuer(issuer) ? '__Host-' : '';
  return { session: `${prefix}keyhall_session`, csrf: `${prefix}keyhall_csrf`, sso: `${prefix}keyhall_sso` };
}

export function cookieOptions(issuer: string, maxAgeSeconds?: number): CookieOptions {
  return { path: '/', httpOnly: true, sameSite: 'lax', secure: secureIssuer(issuer), ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}) };
}

/** A fresh CSRF cookie value (256 bits). */
export const newCsrfSecret = () => randomBytes(32).toString('base64url');

/** The form token derived from the browser's CSRF cookie (double submit, keyed so it cannot be set by a sibling). */
export function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update('keyhall:csrf:v1').digest('base64url');
}

export function checkCsrfToken(secret: string | undefined, token: string | undefined): boolean {
  if (!secret || !token) return false;
  return safeEqual(csrfToken(secret), token);
}

/** A cross-site form post: an Origin header (or `null`) that is not the issuer's origin. */
export function crossOrigin(origin: string | undefined, issuer: string): boolean {
  if (origin === undefined) return false;
  return origin !== new URL(issuer).origin;
}

const hasControlChars = (v: string) => [...v].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** A path that a browser resolves against the current origin: one `/`, never `//` or `/\`. */
const originRelative = (v: string) => v.startsWith('/') && !v.startsWith('//') && !/[\\\s]/.test(v) && !hasControlChars(v);

/**
 * Only a relative, same-tenant path: `/x`, never `//host`, `/\host`, a scheme or control
 * characters. The check runs on the input and again on the normalised result, because dot
 * segments can turn a path into a network-path reference (`/.//evil.example/x`,
 * `/..//evil.example/x` and `/%2e%2e//evil.example/x` all normalise to `//evil.example/x`).
 */
export function safeReturnTo(value: string | undefined, issuer: string): string | undefined {
  if (!value || value.length > 512 || !originRelative(value)) return undefined;
  try {
    const origin = new URL(issuer).origin;
    const url = new URL(value, issuer);
    if (url.origin !== origin) return undefined;
    const result = url.pathname + url.search;
    if (!originRelative(result) || new URL(result, issuer).origin !== origin) return undefined;
    return result;
  } catch {
    return undefined;
  }
}
