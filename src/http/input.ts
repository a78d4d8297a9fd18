import { errors } from '../kernel/errors.js';

// A NUL character, or a UTF-16 surrogate that is not part of a pair.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Finds the first string (value or key) in a parsed request part that cannot be stored as text
 * on every database (PostgreSQL refuses NUL; lone surrogates would be silently replaced).
 * Returns the dotted path of the offending field, or undefined.
 */
export function findUnstorableText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path || 'value' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnstorableText(value[i], path ? `${path}.${i}` : String(i));
      if (hit) return hit;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (UNSTORABLE.test(key)) return childPath;
      const hit = findUnstorableText(child, childPath);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** 400 invalid_request for text no database can store faithfully, before any handler runs. */
export function rejectUnstorableText(parts: { body?: unknown; query?: unknown; params?: unknown }): void {
  for (const part of [parts.params, parts.query, parts.body]) {
    const field = findUnstorableText(part);
    if (field) throw errors.invalidRequest(`${field}: contains a NUL character or an unpaired surrogate`);
  }
}
