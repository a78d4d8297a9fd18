/**
 * Authorization-endpoint errors (RFC 6749 §4.1.2.1). A `page` error is shown to the user and
 * never redirected (unknown client, bad redirect_uri, unusable request_uri); every other error
 * goes back to the client's redirect_uri with `error`, `state` and `iss` (RFC 9207). At /par the
 * same errors are JSON bodies.
 */
export class AuthorizeError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    /** False: show an error page; never redirect. */
    readonly redirectable: boolean,
  ) {
    super(`${code}: ${description}`);
  }
}

const page = (code: string) => (d: string) => new AuthorizeError(code, d, false);
const redirect = (code: string) => (d: string) => new AuthorizeError(code, d, true);

export const authorizeErrors = {
  /** Unknown client or redirect_uri: an error page (RFC 6749 §4.1.2.1). */
  badClient: page('invalid_client'),
  badRedirectUri: page('invalid_request'),
  badRequestUri: page('invalid_request_uri'),
  pageInvalidRequest: page('invalid_request'),
  /** A request object that fails verification: its redirect_uri cannot be trusted, so a page (RFC 9101 §6.3). */
  badRequestObject: page('invalid_request_object'),
  invalidRequest: redirect('invalid_request'),
  unsupportedResponseType: redirect('unsupported_response_type'),
  invalidScope: redirect('invalid_scope'),
  invalidTarget: redirect('invalid_target'),
  unauthorizedClient: redirect('unauthorized_client'),
  requestNotSupported: redirect('request_not_supported'),
  loginRequired: redirect('login_required'),
  consentRequired: redirect('consent_required'),
  accessDenied: redirect('access_denied'),
};

/** The client redirect for a response: query parameters added to the registered URI as is. */
export function redirectTo(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}
