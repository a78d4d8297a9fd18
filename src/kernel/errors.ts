/**
 * The one error type of Keyhall. Everything a client can be told is an AppError; anything else
 * is rendered as `server_error` with the details kept for the log only.
 * Error codes are made here, by factories, never written as literals in handlers.
 *
 * `cause` (the underlying failure) and `detail` (what an operator needs to know) are logged by
 * the renderer and never sent: the client sees only `error` and `error_description`.
 */
export class AppError extends Error {
  /** Log-only explanation; never rendered. */
  detail: string | undefined;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly description?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description ? `${code}: ${description}` : code);
    this.name = 'AppError';
  }

  /** Attaches the underlying failure and a log-only detail; returns this error for `throw`. */
  because(cause: unknown, detail?: string): this {
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false, configurable: true, writable: true });
    if (detail !== undefined) this.detail = detail;
    return this;
  }

  toBody(): { error: string; error_description?: string } {
    return this.description ? { error: this.code, error_description: this.description } : { error: this.code };
  }
}

export const errors = {
  invalidRequest: (description?: string) => new AppError(400, 'invalid_request', description),
  invalidScope: (description?: string) => new AppError(400, 'invalid_scope', description),
  notFound: (description?: string) => new AppError(404, 'not_found', description),
  /** No tenant on the request's host: names the host received and how an operator lists tenants. */
  unknownTenant: (host?: string) =>
    new AppError(
      404,
      'unknown_tenant',
      host === undefined
        ? 'No tenant is served on this host'
        : `No tenant is served on host ${JSON.stringify(host)}; each tenant answers only on its own host (list them with \`keyhall tenant list\`)`,
    ),
  methodNotAllowed: (allow: string, method?: string) =>
    new AppError(405, 'method_not_allowed', `${method ? `${method} is not allowed here` : 'method not allowed'}; this path accepts ${allow}`, { allow }),
  /** The request line and headers exceed Node's maxHeaderSize (a very long URL or a huge header). */
  headersTooLarge: (limitBytes: number) =>
    new AppError(431, 'request_too_large', `the request line and headers together exceed ${limitBytes} bytes (a URL or header too long)`),
  requestTimeout: () => new AppError(408, 'request_timeout', 'the request did not arrive in time'),
  conflict: (description?: string) => new AppError(409, 'conflict', description),
  /** An unlink that would leave the user no way to sign in (docs/account.md). */
  lastSignInMethod: (description: string) => new AppError(409, 'last_sign_in_method', description),
  /** An email change to an address another user holds (docs/account.md). */
  emailTaken: (description: string) => new AppError(409, 'email_taken', description),
  payloadTooLarge: () => new AppError(413, 'request_too_large', 'The request body is too large'),
  /** A hosted page's form or link has expired or was already used. */
  pageExpired: (description: string) => new AppError(400, 'invalid_request', description),
  /** A hosted-page form post that failed the CSRF check. */
  csrfFailed: () => new AppError(403, 'csrf_failed', 'This form has expired or did not come from this site. Go back, reload the page and try again.'),
  /** A console API mutation without its CSRF header, or from another origin (docs/console.md). */
  csrfRejected: (description: string) => new AppError(403, 'csrf_failed', description),
  /** The console API without a signed-in session (docs/console.md). */
  loginRequired: (description = 'sign in first: /login?return_to=/console/') => new AppError(401, 'login_required', description),
  unsupportedMediaType: (description?: string) => new AppError(415, 'unsupported_media_type', description),
  /** /v1 without credentials: a bare Bearer challenge (RFC 6750 §3.1). */
  apiKeyRequired: () => new AppError(401, 'invalid_token', 'an API key is required: Authorization: Bearer sk_live_…', { 'www-authenticate': 'Bearer' }),
  invalidToken: (description?: string, scheme = 'Bearer') =>
    new AppError(401, 'invalid_token', description, { 'www-authenticate': `${scheme} error="invalid_token"` }),
  forbidden: (description?: string) => new AppError(403, 'forbidden', description),
  insufficientScope: (description?: string) => new AppError(403, 'insufficient_scope', description),
  tooManyRequests: (retryAfterSeconds: number) =>
    new AppError(429, 'rate_limited', 'too many requests; retry later', { 'retry-after': String(retryAfterSeconds) }),
  unavailable: (description?: string) => new AppError(503, 'temporarily_unavailable', description),
  /** The vault: no such connected account in this organization (another org's looks the same). */
  accountNotFound: () => new AppError(404, 'account_not_found', 'no such connected account in this organization'),
  /** The vault could not get a live token from the upstream (refused, unreachable, or the account needs reauthorization). */
  upstreamRefreshFailed: (description: string) => new AppError(502, 'upstream_refresh_failed', description),
  /** A connect callback whose upstream exchange failed (the code was refused, or the answer was invalid). */
  upstreamError: (description: string) => new AppError(502, 'upstream_error', description),
  serverError: () => new AppError(500, 'server_error'),
};

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
