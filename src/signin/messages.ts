/**
 * The messages the sign-in engine's outcomes carry: keys of the hosted pages' catalogue
 * (src/screens/i18n), rendered in the page's language. The reason codes of refused SSO sign-ins are in the audit
 * event and the error page's code.
 */
import { AppError, errors } from '../kernel/errors.js';
import { en, type MessageKey } from '../screens/i18n/index.js';
import type { SocialFailureReason } from '../social/service.js';
import type { SsoFailureReason } from '../sso/service.js';

/** The same words for an unknown email and a wrong password (no account enumeration). */
export const BAD_CREDENTIALS: MessageKey = 'login.bad_credentials';
export const LOGIN_LIMITED: MessageKey = 'login.too_many';
export const SSO_UNAVAILABLE: MessageKey = 'login.sso_unavailable';
/** The sign-in policy requires a verified email (docs/signup.md); a new verification email is on its way. */
export const EMAIL_UNVERIFIED: MessageKey = 'login.email_unverified';
export const CHALLENGE_LIMITED: MessageKey = 'totp.too_many';
export const CODE_INVALID: MessageKey = 'challenge.wrong';
export const PASSKEY_REQUIRED: MessageKey = 'challenge.passkey_only';
/** A user code at /activate that names no pending device authorization (unknown, used or expired: the same words). */
export const DEVICE_CODE_INVALID: MessageKey = 'device.code_invalid';
export const DEVICE_LIMITED: MessageKey = 'device.too_many';

/** A flow handle that names no open flow (unknown, expired, completed, or moved on by another request). */
export const flowGone = () => errors.pageExpired(en['error.flow_gone']);

/** A refused SSO sign-in as the error page shows it (in the page's language: the catalogue's `sso.*`). */
export const ssoFailure = (reason: SsoFailureReason) =>
  new AppError(reason === 'connection_unknown' ? 404 : 400, reason === 'connection_unknown' ? 'not_found' : 'access_denied', en[`sso.${reason}`]);

/**
 * A refused social sign-in as the error page shows it: 404 for an unknown connection, 403 when
 * the tenant's rules refuse it (turned off, no sign-up, an existing account not linked
 * automatically), 409 when a link from /account names an identity another user holds, 502 when
 * the provider cannot be reached, 400 for an answer that fails its checks.
 */
export function socialFailure(reason: SocialFailureReason): AppError {
  const description = en[`social.${reason}`];
  switch (reason) {
    case 'connection_unknown':
      return new AppError(404, 'not_found', description);
    case 'connection_disabled':
    case 'signup_disabled':
    case 'account_exists':
      return new AppError(403, 'access_denied', description);
    case 'unreachable':
      return new AppError(502, 'temporarily_unavailable', description);
    case 'identity_in_use':
      return new AppError(409, 'identity_in_use', description);
    default:
      return new AppError(400, 'access_denied', description);
  }
}
