import { errors } from './errors.js';

// A NUL character, or a UTF-16 surrogate that is not part of a pair.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A field as the client wrote it: `name`, `metadata.foo`, `redirect_uris[0]`. */
export function fieldPath(keys: ReadonlyArray<PropertyKey>): string {
  return keys.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)), '');
}

/** Deeper request structures than this are refused: no API of ours nests anywhere near it. */
export const MAX_INPUT_DEPTH = 64;

type Finding = { kind: 'text'; path: string } | { kind: 'depth'; path: string };

/**
 * Walks a parsed request part (iteratively: a hostile body cannot exhaust the stack) and
 * reports the first string, value or key, that no database stores faithfully (PostgreSQL
 * refuses NUL; lone surrogates would be silently replaced), or the first place nested deeper
 * than MAX_INPUT_DEPTH.
 */
export function inspectInput(root: unknown): Finding | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '', depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return { kind: 'text', path: path || 'value' };
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return { kind: 'depth', path: path || 'value' };
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childPath = path ? `${path}.${key}` : key;
      if (!Array.isArray(value) && UNSTORABLE.test(key)) return { kind: 'text', path: childPath };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return undefined;
}

/** 400 invalid_request for unstorable text or absurd nesting, before any handler runs. */
export function rejectUnstorableText(parts: { body?: unknown; query?: unknown; params?: unknown }): void {
  for (const part of [parts.params, parts.query, parts.body]) {
    const finding = inspectInput(part);
    if (finding?.kind === 'text') throw errors.invalidRequest(`${finding.path}: contains a NUL character or an unpaired surrogate`);
    if (finding?.kind === 'depth') throw errors.invalidRequest(`${finding.path}: nested more than ${MAX_INPUT_DEPTH} levels deep`);
  }
}
