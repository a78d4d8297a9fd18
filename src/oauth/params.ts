/** The one reader of request parameters (RFC 6749 §3.1, §3.2): each at most once, empty means absent. */
import { oauthErrors } from './errors.js';

/** Parsed form or query parameters; a repeated parameter is an array. */
export type RawParams = Record<string, string | string[] | undefined>;

/** Parameters that may legitimately repeat (RFC 8707 `resource`, RFC 8693 `audience`). */
const MULTI = new Set(['resource', 'audience']);

/**
 * One value of a parameter. A repeated one throws what `repeated` makes, or, without it, counts
 * as absent (hosted-page forms, where the answer is a page, not an error code).
 */
export function readParam(raw: RawParams | undefined, name: string, repeated?: (description: string) => Error): string | undefined {
  const value = raw?.[name];
  if (Array.isArray(value)) {
    if (MULTI.has(name)) throw new Error(`${name} is multi-valued: use params()`);
    if (repeated) throw repeated(`parameter ${name} is repeated`);
    return undefined;
  }
  return value === undefined || value === '' ? undefined : value;
}

/** A single-valued parameter of an OAuth endpoint; a repeated one is `invalid_request`. */
export function param(body: RawParams, name: string): string | undefined {
  return readParam(body, name, oauthErrors.invalidRequest);
}

export function requiredParam(body: RawParams, name: string): string {
  const value = param(body, name);
  if (value === undefined) throw oauthErrors.invalidRequest(`missing parameter ${name}`);
  return value;
}

/** A parameter that may repeat; empty values and repeats dropped. */
export function params(body: RawParams, name: string): string[] {
  const value = body[name];
  if (value === undefined) return [];
  return [...new Set((Array.isArray(value) ? value : [value]).filter((v) => v !== ''))];
}

/** One header value; a repeated header is `invalid_request`. */
export function header(headers: RawParams, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) {
    if (value.length > 1) throw oauthErrors.invalidRequest(`header ${name} is repeated`);
    return value[0];
  }
  return value;
}
