/** Reading form parameters the way RFC 6749 §3.2 asks: each at most once, empty means absent. */
import { oauthErrors } from './errors.js';
import type { OAuthHttpRequest } from './types.js';

/** Parameters that may legitimately repeat (RFC 8707 `resource`, RFC 8693 `audience`). */
const MULTI = new Set(['resource', 'audience']);

/** A single-valued parameter; a repeated one is `invalid_request`. */
export function param(body: OAuthHttpRequest['body'], name: string): string | undefined {
  const value = body[name];
  if (Array.isArray(value)) {
    if (MULTI.has(name)) throw new Error(`${name} is multi-valued: use params()`);
    throw oauthErrors.invalidRequest(`parameter ${name} is repeated`);
  }
  return value === undefined || value === '' ? undefined : value;
}

export function requiredParam(body: OAuthHttpRequest['body'], name: string): string {
  const value = param(body, name);
  if (value === undefined) throw oauthErrors.invalidRequest(`missing parameter ${name}`);
  return value;
}

/** A parameter that may repeat; empty values dropped. */
export function params(body: OAuthHttpRequest['body'], name: string): string[] {
  const value = body[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v) => v !== '');
}

/** One header value; a repeated header is `invalid_request`. */
export function header(req: OAuthHttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  if (Array.isArray(value)) {
    if (value.length > 1) throw oauthErrors.invalidRequest(`header ${name} is repeated`);
    return value[0];
  }
  return value;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** Parses a `scope` parameter (RFC 6749 §3.3) into a de-duplicated list. */
export function parseScope(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const scopes = value.split(' ').filter(Boolean);
  for (const s of scopes) if (!SCOPE_TOKEN.test(s)) throw oauthErrors.invalidScope('malformed scope');
  return [...new Set(scopes)];
}
