/** The scope grammar (RFC 6749 §3.3): `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`, space-separated. */

/** One scope token. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** A whole `scope` value: tokens separated by single spaces. */
export const SCOPE_LIST = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

/**
 * Parses a `scope` parameter into a de-duplicated list (extra spaces tolerated, as clients send
 * them); a malformed token throws what `invalid` makes. Undefined when no scope was sent.
 */
export function parseScope(value: string | undefined, invalid: (description: string) => Error): string[] | undefined {
  if (value === undefined) return undefined;
  const scopes = [...new Set(value.split(' ').filter(Boolean))];
  for (const s of scopes) if (!SCOPE_TOKEN.test(s)) throw invalid(`malformed scope: ${s}`);
  return scopes;
}

/** Whether a space-separated scope string (a token's `scope` claim) holds `scope`. */
export function hasScope(scopeClaim: string | undefined, scope: string): boolean {
  return (scopeClaim ?? '').split(' ').includes(scope);
}
