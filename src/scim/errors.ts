import SCIMMY from 'scimmy';

/**
 * SCIM errors (RFC 7644 §3.12): `{schemas:[Error], status:"400", scimType?, detail?}` served as
 * application/scim+json. Every failure under /scim/v2 is rendered through `toScimError`.
 */
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

export type ScimType =
  'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive';

export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: ScimType | undefined,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ScimError';
  }

  toBody() {
    return {
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.detail,
    };
  }
}

export const scimErrors = {
  invalidFilter: (detail: string) => new ScimError(400, 'invalidFilter', detail),
  invalidSyntax: (detail: string) => new ScimError(400, 'invalidSyntax', detail),
  invalidValue: (detail: string) => new ScimError(400, 'invalidValue', detail),
  invalidPath: (detail: string) => new ScimError(400, 'invalidPath', detail),
  noTarget: (detail: string) => new ScimError(400, 'noTarget', detail),
  mutability: (detail: string) => new ScimError(400, 'mutability', detail),
  uniqueness: (detail: string) => new ScimError(409, 'uniqueness', detail),
  unauthorized: (detail: string) => new ScimError(401, undefined, detail, { 'www-authenticate': 'Bearer realm="scim"' }),
  notFound: (detail: string) => new ScimError(404, undefined, detail),
  methodNotAllowed: (detail: string) => new ScimError(405, undefined, detail),
  preconditionFailed: (detail: string) => new ScimError(412, undefined, detail),
  tooLarge: (detail: string) => new ScimError(413, undefined, detail),
  unsupportedMediaType: (detail: string) => new ScimError(415, undefined, detail),
  tooManyRequests: (retryAfterSeconds: number) =>
    new ScimError(429, undefined, 'too many requests for this directory connection', { 'retry-after': String(retryAfterSeconds) }),
  notImplemented: (detail: string) => new ScimError(501, undefined, detail),
  server: () => new ScimError(500, undefined, 'internal error'),
};

/**
 * Whether a request target (path and query, as in the request line) is under /scim/v2: its
 * failures are SCIM errors, those found before routing (by Node's parser or Fastify's router) too.
 */
export const isScimTarget = (target: string): boolean => /^\/scim\/v2(?:[/?]|$)/.test(target);

/** scimmy throws its own SCIMError {status, scimType, message}: map it over. */
export function fromScimmy(err: unknown): ScimError | undefined {
  if (err instanceof SCIMMY.Types.Error) {
    const e = err as unknown as { status: number; scimType?: string; message: string };
    return new ScimError(e.status, e.scimType as ScimType | undefined, e.message ?? 'invalid request');
  }
  return undefined;
}
