/**
 * Validation of an authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707, OIDC Core
 * §3.1.2), one check per function. Shared by GET/POST /authorize and POST /par.
 */
import { AppError } from '../../kernel/errors.js';
import { isAcr } from './acr.js';
import { params, type RawParams, readParam } from '../params.js';
import { parseScope } from '../scope.js';
import { checkResourceSyntax } from '../token/targets.js';
import type { ClientRecord, ClientStore, OAuthTenant } from '../types.js';
import { GRANT_TYPE } from '../types.js';
import { AuthorizeError, authorizeErrors as E } from './errors.js';
import type { AuthorizationRequest, SigninClientSettings } from './types.js';

export type { RawParams };

/** Scopes every client may ask for, on top of its registered ones. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
/** OIDC Core §3.1.2.1, and `create` (OIDC Prompt Create 1.0: open sign-up, docs/signup.md). */
export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account', 'create'] as const;
export const PAR_URN = 'urn:ietf:params:oauth:request_uri:';

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const JKT = /^[A-Za-z0-9_-]{43}$/;
const ORG_ID = /^org_[0-9a-z]{26}$/;

/** One value of a parameter; repeated → `invalid_request` (as a page error when `page`). */
export function single(raw: RawParams, name: string, page = false): string | undefined {
  return readParam(raw, name, page ? E.pageInvalidRequest : E.invalidRequest);
}

/** The client named by `client_id`; unknown or missing → error page. */
export async function resolveClient(raw: RawParams, tenant: OAuthTenant, clients: ClientStore): Promise<ClientRecord> {
  const id = single(raw, 'client_id', true);
  if (id === undefined) throw E.badClient('missing client_id');
  let client: ClientRecord | undefined;
  try {
    client = await clients.find(tenant.id, id);
  } catch (err) {
    // A client_id naming a metadata document that cannot be used (src/mcp/cimd.ts): say why, on the page.
    if (err instanceof AppError && err.code === 'invalid_client') throw E.badClient(err.description ?? 'unusable client_id');
    throw err;
  }
  if (!client) throw E.badClient('unknown client_id');
  return client;
}

/** Exact string match against the registration (RFC 9700 §2.1); anything else → error page. */
export function checkRedirectUri(client: ClientRecord, raw: RawParams): string {
  const uri = single(raw, 'redirect_uri', true);
  if (uri === undefined) throw E.badRedirectUri('missing redirect_uri');
  if (!client.redirectUris.includes(uri)) throw E.badRedirectUri('redirect_uri is not registered for this client');
  return uri;
}

function checkGrantType(client: ClientRecord): void {
  if (!client.grantTypes.includes(GRANT_TYPE.authorizationCode)) throw E.unauthorizedClient('the client may not use the authorization code grant');
}

function checkResponseType(raw: RawParams): void {
  const rt = single(raw, 'response_type');
  if (rt === undefined) throw E.invalidRequest('missing response_type');
  if (rt !== 'code') throw E.unsupportedResponseType('only response_type=code is supported');
  const mode = single(raw, 'response_mode');
  if (mode !== undefined && mode !== 'query') throw E.invalidRequest('only response_mode=query is supported');
}

/** A `request` left here is one a client without registered keys sent: it cannot be verified. */
function checkNoRequestObject(raw: RawParams): void {
  if (raw.request !== undefined) throw E.requestNotSupported('this client has no registered keys to sign request objects with; use PAR');
}

function checkScopes(raw: RawParams, client: ClientRecord): string[] {
  const scopes = parseScope(single(raw, 'scope'), E.invalidScope) ?? [];
  const allowed = new Set<string>([...OIDC_SCOPES, ...client.scopes]);
  for (const s of scopes) if (!allowed.has(s)) throw E.invalidScope(`scope not allowed: ${s}`);
  return scopes;
}

/** S256 only (`plain` refused); required for public clients and for every pushed request. */
function checkPkce(raw: RawParams, client: ClientRecord, pushed: boolean): string | null {
  const challenge = single(raw, 'code_challenge');
  const method = single(raw, 'code_challenge_method');
  if (method !== undefined && method !== 'S256') throw E.invalidRequest('code_challenge_method must be S256');
  if (challenge === undefined) {
    if (method !== undefined) throw E.invalidRequest('code_challenge_method without code_challenge');
    if (client.authMethod === 'none') throw E.invalidRequest('public clients must use PKCE (code_challenge with S256)');
    if (pushed) throw E.invalidRequest('code_challenge is required');
    return null;
  }
  if (method === undefined) throw E.invalidRequest('code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(challenge)) throw E.invalidRequest('code_challenge must be a base64url SHA-256 (43 characters)');
  return challenge;
}

function checkPrompt(raw: RawParams): string[] {
  const value = single(raw, 'prompt');
  if (value === undefined) return [];
  const prompt = [...new Set(value.split(' ').filter(Boolean))];
  for (const p of prompt) if (!(PROMPT_VALUES as readonly string[]).includes(p)) throw E.invalidRequest(`unsupported prompt value: ${p}`);
  if (prompt.includes('none') && prompt.length > 1) throw E.invalidRequest('prompt=none cannot be combined');
  return prompt;
}

function checkMaxAge(raw: RawParams): number | null {
  const value = single(raw, 'max_age');
  if (value === undefined) return null;
  if (!/^\d{1,9}$/.test(value)) throw E.invalidRequest('max_age must be a non-negative integer');
  return Number(value);
}

/** `acr_values`: space-separated; the values Keyhall knows are kept (OIDC Core §3.1.2.1: voluntary, unknown ones ignored). */
function checkAcrValues(raw: RawParams): string[] {
  const value = single(raw, 'acr_values');
  if (value === undefined) return [];
  if (value.length > 512) throw E.invalidRequest('acr_values is too long');
  return [...new Set(value.split(' ').filter(isAcr))];
}

/** `ui_locales`: space-separated BCP 47 tags, a preference (tags that are no language tag are dropped). */
function checkUiLocales(raw: RawParams): string[] | undefined {
  const value = single(raw, 'ui_locales');
  if (value === undefined) return undefined;
  if (value.length > 256) throw E.invalidRequest('ui_locales is too long');
  return value.split(' ').filter((tag) => /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(tag));
}

function checkLength(raw: RawParams, name: string, max: number): string | null {
  const value = single(raw, name);
  if (value === undefined) return null;
  if (value.length > max) throw E.invalidRequest(`${name} is too long`);
  return value;
}

/** RFC 8707: absolute URIs without fragment, each registered for the client (or the issuer). */
function checkResources(raw: RawParams, client: ClientRecord, tenant: OAuthTenant): string[] {
  const list = params(raw, 'resource');
  for (const r of list) {
    checkResourceSyntax(r, E.invalidTarget);
    if (!client.allowedResources.includes(r) && r !== tenant.issuer) throw E.invalidTarget(`resource not allowed for this client: ${r}`);
  }
  return list;
}

function checkDpopJkt(raw: RawParams, proofJkt: string | undefined): string | null {
  const jkt = single(raw, 'dpop_jkt');
  if (jkt !== undefined && !JKT.test(jkt)) throw E.invalidRequest('dpop_jkt must be a base64url JWK SHA-256 thumbprint');
  if (jkt !== undefined && proofJkt !== undefined && jkt !== proofJkt) throw E.invalidRequest('dpop_jkt does not match the DPoP proof key');
  return jkt ?? proofJkt ?? null;
}

function checkOrganization(raw: RawParams): string | null {
  const org = single(raw, 'organization');
  if (org !== undefined && !ORG_ID.test(org)) throw E.invalidRequest('organization must be an org_ id');
  return org ?? null;
}

/** An SSO connection (`sso_…`) or a social connection (`soc_…`, docs/social.md). */
const CONNECTION_ID = /^(sso|soc)_[0-9a-z]{26}$/;

function checkConnectionHint(raw: RawParams): string | null {
  const given = single(raw, 'connection');
  const prefixed = single(raw, 'kh_connection');
  if (given !== undefined && prefixed !== undefined && given !== prefixed) throw E.invalidRequest('connection and kh_connection name different connections');
  const hint = given ?? prefixed;
  if (hint !== undefined && !CONNECTION_ID.test(hint)) throw E.invalidRequest('connection must be an sso_ or soc_ id');
  return hint ?? null;
}

export interface ValidateOptions {
  tenant: OAuthTenant;
  settings: SigninClientSettings;
  /** True at /par (code_challenge required; `request_uri` not allowed). */
  pushed: boolean;
  /** The key of a DPoP proof sent to /par. */
  proofJkt?: string;
  /** True when `raw` is the content of a verified request object (RFC 9101). */
  signed?: boolean;
}

/** Validates everything after client and redirect_uri; errors are redirectable. */
export function validateAuthorizationRequest(raw: RawParams, client: ClientRecord, redirectUri: string, o: ValidateOptions): AuthorizationRequest {
  checkGrantType(client);
  if (o.pushed && raw.request_uri !== undefined) throw E.invalidRequest('request_uri is not allowed in a pushed request');
  if (!o.pushed && o.settings.requirePar) throw E.invalidRequest('this client must use pushed authorization requests');
  if (!o.pushed && o.settings.profile === 'fapi2') throw E.invalidRequest('FAPI 2.0 clients must use pushed authorization requests');
  if (o.settings.requireSignedRequestObject && !o.signed) throw E.invalidRequest('this client must send its authorization request as a signed request object');
  checkResponseType(raw);
  checkNoRequestObject(raw);
  const uiLocales = checkUiLocales(raw);
  return {
    clientId: client.id,
    redirectUri,
    scopes: checkScopes(raw, client),
    state: checkLength(raw, 'state', 2048),
    nonce: checkLength(raw, 'nonce', 512),
    codeChallenge: checkPkce(raw, client, o.pushed),
    prompt: checkPrompt(raw),
    maxAge: checkMaxAge(raw),
    loginHint: checkLength(raw, 'login_hint', 254),
    resources: checkResources(raw, client, o.tenant),
    dpopJkt: checkDpopJkt(raw, o.proofJkt),
    organizationId: checkOrganization(raw),
    connectionHint: checkConnectionHint(raw),
    idTokenHint: checkLength(raw, 'id_token_hint', 8192),
    acrValues: checkAcrValues(raw),
    ...(uiLocales ? { uiLocales } : {}),
  };
}

export { AuthorizeError };
