/**
 * The console's only server: same-origin /console/api (docs/console.md). Behind it are the /v1
 * management routes, so the console speaks them through the client typed by the served /v1
 * OpenAPI document (console/src/generated/, written by `npm run openapi:client`): a route whose
 * schema changes breaks the console's type check, not the console at run time. The console's
 * own routes (session, setup, second-factor enrolment, overview, administrators) are not part of
 * /v1 and its document: `own()` calls them.
 */
import createClient from 'openapi-fetch';
import { pathsV1Credential_typesPostRequestBodyContentApplicationJsonClaimsTypeValues, type components, type paths } from './generated/keyhall-v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

let csrfToken = '';
/** The CSRF token every mutation sends in x-csrf-token (from GET /console/api/session or /setup). */
export const setCsrf = (token: string) => {
  csrfToken = token;
};

const BASE = '/console/api';
const SAFE_METHODS = new Set(['GET', 'HEAD']);
const unreachable = () => new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');

/** The OAuth-style error of a failed answer (a body that is not one still names the status). */
function failure(status: number, body: unknown): ApiError {
  const e = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; error_description?: unknown };
  return new ApiError(
    status,
    typeof e.error === 'string' ? e.error : 'error',
    typeof e.error_description === 'string' ? e.error_description : `The request failed (HTTP ${status}).`,
  );
}

/** The /v1 operations as the console serves them: under /console/api, without the /v1 prefix. */
export type ConsolePaths = { [P in keyof paths as P extends `/v1${infer Rest}` ? Rest : never]: paths[P] };

/** The typed client of the /v1 routes; `call()` turns its answers into data or an ApiError. */
export const client = createClient<ConsolePaths>({ baseUrl: BASE, credentials: 'same-origin' });
client.use({
  onRequest({ request }) {
    if (!SAFE_METHODS.has(request.method)) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
});

/** The data of a successful answer (undefined for 204); throws an ApiError for a failed one or none. */
export async function call<D>(pending: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  let answer: { data?: D; error?: unknown; response: Response };
  try {
    answer = await pending;
  } catch {
    throw unreachable();
  }
  if (!answer.response.ok) throw failure(answer.response.status, answer.error);
  return answer.data as D;
}

/** One of the console's own routes (not in /v1): JSON in and out, CSRF header on mutations. */
export async function own<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (!SAFE_METHODS.has(method)) headers['x-csrf-token'] = csrfToken;
  let r: Response;
  try {
    r = await fetch(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw unreachable();
  }
  if (r.status === 204) return undefined as T;
  const data: unknown = await r.json().catch(() => ({}));
  if (!r.ok) throw failure(r.status, data);
  return data as T;
}

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON a /v1 operation answers with on success (200 or 201), as the document declares it. */
export type Answer<P extends keyof ConsolePaths, M extends 'get' | 'post' | 'put' | 'patch'> = ConsolePaths[P][M] extends { responses: infer R }
  ? R extends { 200: infer Ok }
    ? Json<Ok>
    : R extends { 201: infer Created }
      ? Json<Created>
      : never
  : never;
/** One row of a /v1 list (the items of its `data`). */
export type Item<P extends keyof ConsolePaths> = Answer<P, 'get'> extends { data: Array<infer T> } ? T : never;
/** The JSON body a /v1 operation takes. */
export type Body<P extends keyof ConsolePaths, M extends 'post' | 'put' | 'patch'> = ConsolePaths[P][M] extends { requestBody?: infer B }
  ? Json<NonNullable<B>>
  : never;

type Schemas = components['schemas'];
/** One page of a cursor-paged /v1 list. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}
export type Organization = Schemas['Organization'];
export type OAuthClient = Schemas['Client'];
export type ResourceServer = Schemas['ResourceServer'];
export type User = Schemas['User'];
export type AuditEvent = Schemas['Event'];

/** Every organization (pages of 100), for pickers. */
export async function allOrganizations(): Promise<Organization[]> {
  const out: Organization[] = [];
  let after: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await call(client.GET('/organizations', { params: { query: { limit: 100, after } } }));
    out.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    after = page.next_cursor;
  }
  return out;
}

export const query = (params: Record<string, string | number | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** Values the /v1 document enumerates, offered by the console's pickers (the server's own lists, never a copy). */
export {
  pathsV1ConnectProvidersPostRequestBodyContentApplicationJsonPresetValues as CONNECT_PRESETS,
  pathsV1ConnectProvidersPostRequestBodyContentApplicationJsonTypeValues as CONNECT_PROVIDER_TYPES,
  pathsV1ConnectProvidersPostRequestBodyContentApplicationJsonToken_endpoint_auth_methodValues as CONNECT_AUTH_METHODS,
  pathsV1OrganizationsOrgIdConnectAccountsGetParametersQueryStatusValues as CONNECTED_ACCOUNT_STATUSES,
  pathsV1EventsGetParametersQueryActor_typeValues as ACTOR_TYPES,
  pathsV1ClientsPostRequestBodyContentApplicationJsonGrant_typesValues as GRANT_TYPES,
  pathsV1ClientsPostRequestBodyContentApplicationJsonToken_endpoint_auth_methodValues as CLIENT_AUTH_METHODS,
  pathsV1ClientsPostRequestBodyContentApplicationJsonId_token_signed_response_algValues as ID_TOKEN_ALGS,
  pathsV1Mfa_policyPutRequestBodyContentApplicationJsonPolicyValues as MFA_POLICIES,
  pathsV1OrganizationsOrgIdCredentialsOffersPostRequestBodyContentApplicationJsonTx_codeInput_modeValues as TX_CODE_MODES,
  pathsV1Social_connectionsPostRequestBodyContentApplicationJsonPresetValues as SOCIAL_PRESETS,
  pathsV1Social_connectionsPostRequestBodyContentApplicationJsonOauth2Token_endpoint_auth_methodValues as SOCIAL_AUTH_METHODS,
  pathsV1Social_settingsPutRequestBodyContentApplicationJsonAccount_linkingValues as ACCOUNT_LINKING,
} from './generated/keyhall-v1';
/** The types a credential type's claim may have (openapi-typescript 7.13 mis-types this one list: see scripts/openapi.ts). */
export const CLAIM_TYPES = pathsV1Credential_typesPostRequestBodyContentApplicationJsonClaimsTypeValues as unknown as ReadonlyArray<
  Body<'/credential_types', 'post'>['claims'][string]['type']
>;
