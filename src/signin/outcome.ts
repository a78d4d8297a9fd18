/**
 * What a step of the sign-in engine answers. The HTTP layer only renders these: a page with its
 * data (it adds the CSRF token and the frame), a redirect (to a hosted page or to the client), a
 * trip to an upstream IdP (with the browser binding to keep in a cookie), or an error page. Any
 * outcome may carry a new session for the browser's cookie.
 */
import type { AppError } from '../kernel/errors.js';
import type { Brand } from '../screens/brand.js';
import type { Message } from '../screens/i18n/index.js';

export interface LoginView {
  page: 'login';
  data: {
    flow?: string;
    returnTo?: string;
    email?: string;
    message?: Message;
    clientName?: string;
    ssoHint?: boolean;
    /** The social connections' buttons (links to /social/{id}/start). */
    social?: Array<{ id: string; name: string }>;
    /** The sign-in policy offers self sign-up: a "Create account" link (docs/signup.md). */
    signup?: boolean;
    /** The sign-in policy offers passwordless sign-in by email: the "email me a code" form. */
    passwordless?: boolean;
    /** A verification email was sent to this address: the way to the code page. */
    verifyEmail?: string;
  };
}

export interface ConsentView {
  page: 'consent';
  data: { flow: string; clientName: string; scopes: string[]; resources: string[] };
}

export interface ChallengeView {
  page: 'challenge';
  data: { flow?: string; returnTo?: string; totp: boolean; passkeys: boolean; enrol: boolean; passkeyOnly: boolean; message?: Message };
}

/** /activate: the person types (or confirms a prefilled) device user code. */
export interface ActivateView {
  page: 'activate';
  /** `error`: why the code was refused (`invalid_user_code`, `rate_limited`), on the page for scripts and tests. */
  data: { userCode?: string; message?: Message; error?: string };
}

/** The device authorization's approval page: the client, its scopes, approve or deny. */
export interface DeviceConsentView {
  page: 'device_consent';
  data: { flow: string; clientName: string; scopes: string[]; resources: string[] };
}

/** After the decision: back to the device. */
export interface DeviceDoneView {
  page: 'device_done';
  data: { approved: boolean };
}

export type PageView = LoginView | ConsentView | ChallengeView | ActivateView | DeviceConsentView | DeviceDoneView;

export type Render = PageView & {
  kind: 'render';
  status: number;
  brand: Brand;
  /** Where the page's forms may lead (the client's redirect_uri), for its CSP. */
  formTargets: string[];
  /** The flow's `ui_locales`, first in the choice of the page's language. */
  uiLocales?: readonly string[] | null;
  retryAfterSeconds?: number;
};

export type SigninOutcome = (
  | Render
  /** 303 to a hosted page, or to the client (a code or an OAuth error, with state and iss). */
  | { kind: 'redirect'; location: string }
  /** 303 to an upstream IdP; `browser` is the binding the round trip is tied to (a cookie). */
  | { kind: 'upstream'; location: string; browser: string }
  | { kind: 'fail'; error: AppError }
) & {
  /** A session to set in the browser's cookie (a sign-in happened). */
  session?: { token: string; maxAgeSeconds: number };
};

export const redirect = (location: string): SigninOutcome => ({ kind: 'redirect', location });
export const fail = (error: AppError): SigninOutcome => ({ kind: 'fail', error });
