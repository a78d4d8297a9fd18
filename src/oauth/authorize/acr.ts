/**
 * Authentication methods (RFC 8176 `amr`) and the authentication context class (`acr`) of a
 * login. acr values, weakest first: `pwd` (one factor), `mfa` (two factors), `phr` (a passkey:
 * phishing-resistant, OpenID EAP ACR Values). docs/passkeys.md.
 */
export const ACR_VALUES = ['pwd', 'mfa', 'phr'] as const;
export type Acr = (typeof ACR_VALUES)[number];

const RANK: Record<Acr, number> = { pwd: 0, mfa: 1, phr: 2 };
export const isAcr = (v: string): v is Acr => Object.hasOwn(RANK, v);

/** A synced (backed-up) passkey is a software-secured key; a device-bound one is hardware-secured. */
export function amrOfPasskey(p: { backedUp: boolean }, userVerified: boolean): string[] {
  const key = p.backedUp ? 'swk' : 'hwk';
  // User verification (PIN or biometric) on top of possession of the key: two factors.
  return userVerified ? [key, 'user', 'mfa'] : [key];
}

/**
 * The amr of a first factor (`pwd`, or `fed` for an SSO sign-in) followed by Keyhall's second
 * factor: `["pwd","otp","mfa"]`, `["fed","hwk","mfa"]`.
 */
export const withSecondFactor = (first: readonly string[], second: readonly string[]) => [
  ...new Set([...first.filter((m) => m !== 'mfa'), ...second.filter((m) => m !== 'mfa' && m !== 'user'), 'mfa']),
];

export function acrOf(amr: readonly string[]): Acr {
  if (amr.includes('hwk') || amr.includes('swk')) return amr.includes('mfa') ? 'phr' : 'pwd';
  return amr.includes('mfa') ? 'mfa' : 'pwd';
}

/** The weakest of the requested values this server knows (the client accepts any of them), or null. */
export function minimumAcr(requested: readonly string[] | undefined): Acr | null {
  const known = (requested ?? []).filter(isAcr);
  if (known.length === 0) return null;
  return known.reduce((a, b) => (RANK[a] <= RANK[b] ? a : b));
}

export const satisfiesAcr = (amr: readonly string[], required: Acr | null) => required === null || RANK[acrOf(amr)] >= RANK[required];
