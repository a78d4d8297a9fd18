/**
 * How a user signs in (docs/account.md): the method each session's first factor used, and the
 * ways an account has left, which an unlink may not take to none ("at least one way to sign in").
 */
import type { Repos } from '../storage/repos/index.js';

/** How a session's first factor was given (`signin_sessions.method`, migration 0042). */
export type SignInMethod = 'password' | 'passkey' | 'sso' | 'social' | 'setup_link' | 'email';

/**
 * A session's sign-in method: the one it recorded, or, for a session from before migration 0042,
 * the one its amr and idp tell (a social connection names the `idp`; `fed` without one is SSO;
 * `hwk`/`swk` without `pwd` or `fed` is a passkey).
 */
export function signInMethodOf(s: { method?: string; amr?: string[]; idp?: string }): string {
  if (s.method) return s.method;
  if (s.idp) return 'social';
  const amr = s.amr ?? ['pwd'];
  if (amr.includes('fed')) return 'sso';
  if (!amr.includes('pwd') && (amr.includes('hwk') || amr.includes('swk'))) return 'passkey';
  return 'password';
}

/** What an account can sign in with. */
export interface SignInWays {
  password: boolean;
  /** Passkeys that still sign in (a disabled one does not). */
  passkeys: number;
  /** Linked social identities. */
  social: number;
  /** SSO connections the user is linked to. */
  sso: number;
}

const LIMIT = 100;

export async function signInWays(r: Repos, tenantId: string, userId: string): Promise<SignInWays> {
  const [user, passkeys, social, sso] = await Promise.all([
    r.users.find(tenantId, userId),
    r.mfa.listPasskeys(tenantId, userId),
    r.socialIdentities.listByUser(tenantId, userId, LIMIT),
    r.ssoIdentities.connectionsOf(tenantId, userId, LIMIT),
  ]);
  return {
    password: user?.passwordHash != null,
    passkeys: passkeys.filter((p) => p.disabledAt === null).length,
    social: social.length,
    sso: sso.length,
  };
}

/** Whether the account still has a way to sign in once one social identity or SSO connection is taken away. */
export function anotherWayLeft(w: SignInWays): boolean {
  return w.password || w.passkeys > 0 || w.social + w.sso > 1;
}

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/\bHeadlessChrome\//, 'Headless Chrome'],
  [/\b(Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/\bWindows\b/, 'Windows'],
  [/\bAndroid\b/, 'Android'],
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

/**
 * A user agent in a few words for "Where you are signed in" and /v1: the browser and the system
 * ("Firefox on Linux"); a program that is not a browser by its product token ("curl"); null when
 * there is none.
 */
export function deviceOf(userAgent: string | null): string | null {
  if (!userAgent?.trim()) return null;
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser ?? system) return (browser ?? system)!;
  return /^[A-Za-z][\w.-]{0,40}/.exec(userAgent.trim())?.[0] ?? null;
}
