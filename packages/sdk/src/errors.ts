/**
 * An error answer of the Keyhall API: its HTTP status and the `{error, error_description}` body
 * every /v1 error carries (docs/errors.md).
 */
export class KeyhallError extends Error {
  override readonly name = 'KeyhallError';
  readonly status: number;
  /** The machine-readable code (`invalid_request`, `not_found`, `rate_limited`, …). */
  readonly error: string;
  readonly error_description: string | undefined;

  constructor(status: number, error: string, error_description?: string) {
    super(`${status} ${error}${error_description ? `: ${error_description}` : ''}`);
    this.status = status;
    this.error = error;
    this.error_description = error_description;
  }
}
