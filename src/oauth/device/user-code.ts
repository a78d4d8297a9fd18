/**
 * The user code of the device grant (RFC 8628 §6.1): eight characters from an alphabet of
 * consonants only (no vowels, so no words; no look-alikes such as 0/O or 1/I), shown as two
 * groups of four (`WDJB-MJHT`). 20^8 ≈ 2.6·10^10 codes; guessing is rate-limited per address.
 * What the person types is normalised: case, spaces and hyphens do not matter.
 */
import { randomInt } from 'node:crypto';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A new user code, formatted `XXXX-XXXX`. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return formatUserCode(code);
}

export const formatUserCode = (normalized: string) => `${normalized.slice(0, 4)}-${normalized.slice(4)}`;

/** The eight characters of a typed code (upper case, separators dropped), or undefined when it cannot be one. */
export function normalizeUserCode(typed: string | undefined): string | undefined {
  if (typed === undefined || typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== LENGTH) return undefined;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return undefined;
  return code;
}
