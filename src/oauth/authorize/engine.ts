/**
 * The authorization endpoint as a small state machine: a validated request becomes a flow; a
 * flow continues to login, consent, or completion (a single-use code sent to the redirect_uri).
 * Framework-free: the HTTP layer resolves the browser session and renders the outcome.
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newSecret } from '../../kernel/ids.js';
import { verifyIdTokenHint } from '../id-token/verify-hint.js';
import type { OrganizationPort } from '../organization.js';
import type { KeySource } from '../tokens/access-token.js';
import { hasRegisteredKeys } from '../client-auth/client-keys.js';
import { codeTtlSeconds } from '../profile.js';
import type { ClientRecord, ClientStore, OAuthTenant, RemoteKeySource } from '../types.js';
import { verifyRequestObject } from './request-object.js';
import { acrOf, minimumAcr, satisfiesAcr } from './acr.js';
import { AuthorizeError, authorizeErrors as E, redirectTo } from './errors.js';
import type { AuthorizationRequest, FlowRecord, SessionRecord, SigninClientSettings, SigninStore } from './types.js';
import { checkRedirectUri, PAR_URN, type RawParams, resolveClient, single, validateAuthorizationRequest } from './validate.js';

export const FLOW_PREFIX = 'fl_';
export const CODE_PREFIX = 'ac_';

export interface AuthorizeSettings {
  codeTtlSeconds: number;
  flowTtlSeconds: number;
}

export interface AuthorizeDeps {
  clients: ClientStore;
  store: SigninStore;
  settings: AuthorizeSettings;
  /** The tenant's keys, to verify an `id_token_hint`. */
  keys: KeySource;
  /** Fetches keys of clients registered with `jwks_uri` (request objects). */
  remoteKeys?: RemoteKeySource | undefined;
  /** The MFA policy; without it only acr_values decide a session's strength. */
  mfaPolicy?: MfaPolicyPort;
  /** Organization-scoped sign-in (`organization=`); without it the parameter only brands the pages. */
  organizations?: OrganizationPort | undefined;
  now: number;
}

export interface MfaPolicyPort {
  /** Whether a second factor is required of this user signing in to this organization (or none). */
  required(tenantId: string, userId: string, organizationId: string | null): Promise<boolean>;
}

export type Outcome =
  /** To the client: a code, or an error with state and iss. */
  | { kind: 'redirect'; location: string }
  /** The user must sign in (again) for this flow; `create`: the client asked for sign-up (prompt=create, OIDC Prompt Create 1.0). */
  | { kind: 'login'; flow: string; create?: boolean }
  /** The user must approve the client's scopes. */
  | { kind: 'consent'; flow: string }
  /** Shown to the user, never redirected. */
  | { kind: 'error'; error: string; description: string };

export interface LoadedFlow {
  /** The handle the browser holds for this flow (the sign-in engine's `flw_…` when it loaded it). */
  id: string;
  /** SHA-256 of the flow id (`fl_…`), the key of its stored record. */
  hash: string;
  flow: FlowRecord;
  client: ClientRecord;
  settings: SigninClientSettings;
}

const errorOutcome = (e: AuthorizeError): Outcome => ({ kind: 'error', error: e.code, description: e.description });

function errorRedirect(tenant: OAuthTenant, req: { redirectUri: string; state: string | null }, e: AuthorizeError): Outcome {
  return { kind: 'redirect', location: redirectTo(req.redirectUri, { error: e.code, error_description: e.description, state: req.state, iss: tenant.issuer }) };
}

/** A pushed request named by `request_uri`: only ours, unexpired, unconsumed, and of this client. */
async function pushedRequest(requestUri: string, client: ClientRecord, tenant: OAuthTenant, deps: AuthorizeDeps) {
  if (!requestUri.startsWith(PAR_URN)) throw E.badRequestUri("only request_uris issued by this server's /par are accepted");
  const parHash = sha256Hex(requestUri);
  const par = await deps.store.findPar(tenant.id, parHash);
  if (!par || par.clientId !== client.id || par.consumedAt !== null || par.expiresAt <= deps.now) {
    throw E.badRequestUri('request_uri is unknown, expired, already used, or belongs to another client');
  }
  return { request: par.request, parHash };
}

/** The moment a login must be newer than (prompt=login, max_age), or null. */
function loginAfter(req: AuthorizationRequest, now: number): number | null {
  if (req.prompt.includes('login') || req.prompt.includes('select_account') || req.prompt.includes('create')) return now;
  if (req.maxAge !== null) return now - req.maxAge * 1000;
  return null;
}

/** GET/POST /authorize: validate, record a flow, and continue it with the current session. */
export async function startAuthorization(raw: RawParams, tenant: OAuthTenant, session: SessionRecord | undefined, deps: AuthorizeDeps): Promise<Outcome> {
  let client: ClientRecord;
  let request: AuthorizationRequest;
  let parHash: string | null = null;
  try {
    client = await resolveClient(raw, tenant, deps.clients);
    const requestUri = single(raw, 'request_uri', true);
    const requestObject = single(raw, 'request', true);
    if (requestUri !== undefined && requestObject !== undefined) throw E.pageInvalidRequest('request and request_uri cannot be combined');
    if (requestUri !== undefined) {
      ({ request, parHash } = await pushedRequest(requestUri, client, tenant, deps));
    } else {
      // RFC 9101: a client with registered keys may sign its request; then only the object's
      // parameters count. A client without keys gets request_not_supported from validation.
      const signed = requestObject !== undefined && hasRegisteredKeys(client);
      const params = signed ? await verifyRequestObject(requestObject, client, tenant, { now: deps.now, remoteKeys: deps.remoteKeys }) : raw;
      const redirectUri = checkRedirectUri(client, params);
      const settings = await deps.store.clientSettings(tenant.id, client.id);
      try {
        request = validateAuthorizationRequest(params, client, redirectUri, { tenant, settings, pushed: false, signed });
      } catch (err) {
        if (err instanceof AuthorizeError && err.redirectable) {
          const state = typeof params.state === 'string' ? params.state : null;
          return errorRedirect(tenant, { redirectUri, state }, err);
        }
        throw err;
      }
    }
  } catch (err) {
    if (err instanceof AuthorizeError) return errorOutcome(err);
    throw err;
  }
  let after = loginAfter(request, deps.now);
  if (request.idTokenHint) {
    const hint = await verifyIdTokenHint(request.idTokenHint, tenant, deps.keys);
    if (!hint || hint.clientId !== client.id) return errorRedirect(tenant, request, E.invalidRequest('id_token_hint is not an ID token issued to this client'));
    // Signed in as someone else than the hint names: prompt=none fails, otherwise sign in again.
    if (session && session.userId !== hint.sub) {
      if (request.prompt.includes('none')) return errorRedirect(tenant, request, E.loginRequired('the signed-in user is not the one id_token_hint names'));
      after = deps.now;
    }
  }
  const id = newSecret(FLOW_PREFIX);
  const flow: FlowRecord = {
    tenantId: tenant.id,
    clientId: client.id,
    request,
    parHash,
    loginAfter: after,
    createdAt: deps.now,
    expiresAt: deps.now + deps.settings.flowTtlSeconds * 1000,
    completedAt: null,
  };
  await deps.store.createFlow(sha256Hex(id), flow);
  const settings = await deps.store.clientSettings(tenant.id, client.id);
  return continueFlow({ id, hash: sha256Hex(id), flow, client, settings }, tenant, session, deps, { consented: false });
}

/**
 * The flow stored under `hash` (SHA-256 of its `fl_…` id), if it is still open; `handle` is what
 * the browser calls it (the sign-in engine's flow id), which login and consent outcomes name.
 */
export async function loadFlow(
  hash: string,
  handle: string,
  tenant: OAuthTenant,
  deps: Pick<AuthorizeDeps, 'clients' | 'store' | 'now'>,
): Promise<LoadedFlow | undefined> {
  const flow = await deps.store.findFlow(tenant.id, hash);
  if (!flow || flow.completedAt !== null || flow.expiresAt <= deps.now) return undefined;
  const client = await deps.clients.find(tenant.id, flow.clientId);
  if (!client) return undefined;
  return { id: handle, hash, flow, client, settings: await deps.store.clientSettings(tenant.id, client.id) };
}

/** A usable session (second factor given), recent enough for the flow, of the strength its acr_values ask for. */
export function sessionSatisfies(flow: FlowRecord, session: SessionRecord | undefined): session is SessionRecord {
  return (
    session !== undefined &&
    session.mfaPending !== true &&
    (flow.loginAfter === null || session.authTime >= flow.loginAfter) &&
    satisfiesAcr(session.amr ?? ['pwd'], minimumAcr(flow.request.acrValues))
  );
}

/**
 * A single-factor session (a password, or an SSO sign-in without a second factor) does not
 * satisfy a flow whose MFA policy requires one — the flow's organization may require MFA where
 * the session's login did not (docs/passkeys.md, "MFA policy").
 */
async function policySatisfied(f: LoadedFlow, tenant: OAuthTenant, session: SessionRecord, deps: AuthorizeDeps): Promise<boolean> {
  if (!deps.mfaPolicy || acrOf(session.amr ?? ['pwd']) !== 'pwd') return true;
  return !(await deps.mfaPolicy.required(tenant.id, session.userId, f.flow.request.organizationId));
}

async function needsConsent(f: LoadedFlow, tenant: OAuthTenant, session: SessionRecord, deps: AuthorizeDeps): Promise<boolean> {
  if (f.flow.request.prompt.includes('consent')) return true;
  if (!f.settings.thirdParty) return false;
  // A third-party client always needs a remembered consent, even when it asks for no scope, and
  // the consent covers both the scopes and the resources (audiences) the tokens will carry.
  const consent = await deps.store.consent(tenant.id, session.userId, f.client.id);
  if (!consent) return true;
  const scopes = new Set(consent.scopes);
  const resources = new Set(consent.resources);
  return f.flow.request.scopes.some((s) => !scopes.has(s)) || f.flow.request.resources.some((r) => !resources.has(r));
}

/** Login → consent → code. `consented`: the user just approved this flow on the consent page. */
export async function continueFlow(
  f: LoadedFlow,
  tenant: OAuthTenant,
  session: SessionRecord | undefined,
  deps: AuthorizeDeps,
  opts: { consented: boolean },
): Promise<Outcome> {
  const req = f.flow.request;
  const interactive = !req.prompt.includes('none');
  if (!sessionSatisfies(f.flow, session) || !(await policySatisfied(f, tenant, session, deps))) {
    if (!interactive) return errorRedirect(tenant, req, E.loginRequired('the user is not signed in'));
    return req.prompt.includes('create') ? { kind: 'login', flow: f.id, create: true } : { kind: 'login', flow: f.id };
  }
  const refused = await organizationRefusal(f, tenant, session, deps, interactive);
  if (refused) return refused;
  if (!opts.consented && (await needsConsent(f, tenant, session, deps))) {
    return interactive ? { kind: 'consent', flow: f.id } : errorRedirect(tenant, req, E.consentRequired('the user has not approved this client'));
  }
  return complete(f, tenant, session, deps);
}

/**
 * `organization=`: the user must be a member (access_denied otherwise), and prompt=none may not
 * switch the session to another organization than the one it signed in to (login_required).
 */
async function organizationRefusal(
  f: LoadedFlow,
  tenant: OAuthTenant,
  session: SessionRecord,
  deps: AuthorizeDeps,
  interactive: boolean,
): Promise<Outcome | undefined> {
  const orgId = f.flow.request.organizationId;
  if (!orgId || !deps.organizations) return undefined;
  if (!interactive && (session.organizationId ?? null) !== orgId)
    return errorRedirect(
      tenant,
      f.flow.request,
      E.loginRequired('the session is not signed in to this organization; switching organization needs an interactive sign-in'),
    );
  if (!(await deps.organizations.grants(tenant.id, orgId, session.userId)))
    return errorRedirect(tenant, f.flow.request, E.accessDenied('the user is not a member of this organization'));
  return undefined;
}

/** Denied on the consent page. */
export async function denyFlow(f: LoadedFlow, tenant: OAuthTenant): Promise<Outcome> {
  return errorRedirect(tenant, f.flow.request, E.accessDenied('the user denied the request'));
}

/** prompt=create while the tenant's sign-up is off: the client hears invalid_request (OIDC Prompt Create 1.0 §4.1, docs/signup.md). */
export async function refuseSignup(f: LoadedFlow, tenant: OAuthTenant): Promise<Outcome> {
  return errorRedirect(tenant, f.flow.request, E.invalidRequest('prompt=create: sign-up is not open on this tenant'));
}

/** Issues the code; the flow and its request_uri are consumed in the same transaction. */
async function complete(f: LoadedFlow, tenant: OAuthTenant, session: SessionRecord, deps: AuthorizeDeps): Promise<Outcome> {
  const req = f.flow.request;
  const code = newSecret(CODE_PREFIX);
  const won = await deps.store.completeFlow(
    tenant.id,
    f.hash,
    f.flow.parHash,
    sha256Hex(code),
    {
      tenantId: tenant.id,
      clientId: f.client.id,
      userId: session.userId,
      grant: {
        redirectUri: req.redirectUri,
        scopes: req.scopes,
        nonce: req.nonce,
        codeChallenge: req.codeChallenge,
        dpopJkt: req.dpopJkt,
        resources: req.resources,
        authTime: session.authTime,
        sessionId: session.id,
        organizationId: req.organizationId,
        amr: session.amr ?? ['pwd'],
        ...(session.idp ? { idp: session.idp } : {}),
      },
      // FAPI 2.0 clients' codes live at most 60 seconds.
      expiresAt: deps.now + codeTtlSeconds(deps.settings.codeTtlSeconds, f.settings.profile) * 1000,
      consumedAt: null,
      issuedJti: null,
      issuedExp: null,
      issuedFamily: null,
    },
    deps.now,
  );
  if (!won) return errorOutcome(E.badRequestUri('this sign-in request was already completed; start again from the application'));
  if (req.organizationId && deps.organizations) await deps.organizations.enter(tenant.id, session.id, req.organizationId);
  return { kind: 'redirect', location: redirectTo(req.redirectUri, { code, state: req.state, iss: tenant.issuer }) };
}
