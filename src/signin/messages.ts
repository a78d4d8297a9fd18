/**
 * The words the sign-in engine's outcomes carry (moved unchanged from the hosted-page routes; the
 * message catalogue takes them over). The reason codes of refused SSO sign-ins are in the audit
 * event and the error page's code.
 */
import { AppError, errors } from '../kernel/errors.js';
import type { SsoFailureReason } from '../sso/service.js';

/** The same words for an unknown email and a wrong password (no account enumeration). */
export const BAD_CREDENTIALS = 'The email or password is incorrect.';
export const LOGIN_LIMITED = 'Too many failed sign-ins. Wait a few minutes and try again.';
export const SSO_UNAVAILABLE = 'Your organization requires single sign-on, and it is not available right now. Ask your administrator.';
export const CHALLENGE_LIMITED = 'Too many attempts. Wait a few minutes and try again.';
export const CODE_INVALID = 'That code is not right, or was already used.';
export const PASSKEY_REQUIRED = 'This application asks for a passkey.';
const FLOW_GONE = 'This sign-in page has expired or was already used. Go back to the application and start again.';

/** A flow handle that names no open flow (unknown, expired, completed, or moved on by another request). */
export const flowGone = () => errors.pageExpired(FLOW_GONE);

const SSO_MESSAGES: Record<SsoFailureReason, string> = {
  connection_unknown: 'This single sign-on connection does not exist.',
  connection_disabled: 'This single sign-on connection is disabled. Ask your administrator.',
  state_invalid: 'This sign-in has expired or was already used. Go back to the application and start again.',
  browser_mismatch: 'This sign-in was started in another browser. Go back to the application and start again.',
  upstream_error: 'Your identity provider did not sign you in.',
  token_error: 'Your identity provider refused the sign-in.',
  invalid_response: 'Your identity provider answered with a response that could not be verified.',
  email_missing: 'Your identity provider did not share your email address.',
  email_unverified: 'Your identity provider did not confirm your email address.',
  email_conflict: 'An account with your email address already exists and cannot be linked to this organization. Ask your administrator.',
  administrator_link_refused: 'Your account is an administrator\'s account: sign in with your own password or passkey. Single sign-on cannot be linked to it from here.',
  link_session_mismatch: 'This link was started by another account, or you signed out meanwhile. Sign in and start again from your sessions page.',
  identity_in_use: 'This identity at your identity provider is already linked to another account.',
  xml_rejected: 'Your identity provider answered with a document that was refused.',
  signature_invalid: 'Your identity provider answered with a response whose signature could not be verified.',
  audience_mismatch: 'Your identity provider answered with a response meant for another service.',
  recipient_mismatch: 'Your identity provider answered with a response meant for another address.',
  request_unknown: 'This sign-in has expired, was already used, or was not started here. Go back to the application and start again.',
  assertion_expired: 'Your identity provider answered with a response that has expired. Check the clocks and start again.',
  assertion_replayed: 'This sign-in response was already used. Go back to the application and start again.',
};

/** A refused SSO sign-in as the error page shows it. */
export const ssoFailure = (reason: SsoFailureReason) =>
  new AppError(reason === 'connection_unknown' ? 404 : 400, reason === 'connection_unknown' ? 'not_found' : 'access_denied', SSO_MESSAGES[reason]);
