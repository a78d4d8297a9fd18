/**
 * The OAuth/OpenID server, composed from ports in one place: the grant table (each grant gets
 * its own stores), client authentication, DPoP, the resource-server guard, the authorization
 * endpoint, logout and discovery. Framework-free: src/context.ts supplies the ports (storage,
 * keys, clock), src/http/oauth/ binds the result to HTTP.
 */
import {
  continueFlow,
  denyFlow,
  refuseSignup,
  type AuthorizeSettings,
  type LoadedFlow,
  loadFlow,
  type MfaPolicyPort,
  type Outcome,
  startAuthorization,
} from './authorize/engine.js';
import type { SessionRecord, SigninStore } from './authorize/types.js';
import type { RawParams } from './authorize/validate.js';
import { type DeviceAuthorizationResponse, type DeviceSettings, handleDeviceAuthorization } from './device/authorization.js';
import type { AttemptCounter, DeviceCodeStore, DeviceDecision } from './device/types.js';
import { decide, findByUserCode, type LoadedDevice, loadPending, type UserCodeResult } from './device/verification.js';
import { authorizationServerMetadata, type Metadata, protectedResourceMetadata } from './discovery/metadata.js';
import { handleIntrospection, handleRevocation, type IntrospectionResponse } from './introspection/introspect.js';
import { type LogoutParams, type LogoutTarget, resolveLogout } from './logout/resolve.js';
import { handlePushedAuthorizationRequest, type ParResponse } from './par/push.js';
import { authorizeResourceRequest, type GuardOptions, type ProtectedRequest } from './resource-server/guard.js';
import { authorizationCodeGrant } from './token/grants/authorization-code.js';
import { clientCredentialsGrant } from './token/grants/client-credentials.js';
import { deviceCodeGrant } from './token/grants/device-code.js';
import { type PreAuthorizedCodes, preAuthorizedCodeGrant } from './token/grants/pre-authorized-code.js';
import { refreshTokenGrant } from './token/grants/refresh-token.js';
import { tokenExchangeGrant } from './token/grants/token-exchange.js';
import { handleTokenRequest } from './token/endpoint.js';
import type { GrantHandler, GrantTable, OAuthDeps, TokenResponse } from './token/types.js';
import type { AccessTokenClaims } from './tokens/verify-access-token.js';
import { GRANT_TYPE, type OAuthHttpRequest, type OAuthTenant } from './types.js';
import type { UserProfileSource } from './userinfo/claims.js';
import type { OrganizationPort } from './organization.js';

export interface OAuthPorts extends OAuthDeps {
  /** PAR request_uris, authorization flows, codes and per-client sign-in settings. */
  signin: SigninStore;
  authorize: AuthorizeSettings;
  parTtlSeconds: number;
  /** User profiles, for the ID token's profile claims. */
  profiles?: UserProfileSource;
  /** Credential offers' pre-authorized codes (OID4VCI); without it the grant is not offered. */
  preAuthorizedCodes?: PreAuthorizedCodes;
  /** Whether the MFA policy (the tenant's, the user's organizations', the flow's) requires a second factor. */
  mfaPolicy?: MfaPolicyPort;
  /** The device authorization grant (RFC 8628): its store, the user-code attempt counter, its settings. */
  device: { store: DeviceCodeStore; attempts: AttemptCounter; settings: DeviceSettings };
  /** Organization-scoped sign-in and the tokens' organization claims (docs/authorization.md). */
  organizations?: OrganizationPort;
}

export interface OAuthServer {
  /** grant_type → handler; discovery lists exactly these. */
  grants: GrantTable;
  /** The ports, for code that issues tokens outside an endpoint (tests, future grants). */
  ports: OAuthPorts;
  token(req: OAuthHttpRequest, tenant: OAuthTenant): Promise<TokenResponse>;
  introspect(req: OAuthHttpRequest, tenant: OAuthTenant): Promise<IntrospectionResponse>;
  revoke(req: OAuthHttpRequest, tenant: OAuthTenant): Promise<void>;
  pushAuthorizationRequest(req: OAuthHttpRequest, tenant: OAuthTenant): Promise<ParResponse>;
  /** The verified access token of a protected request, or a 401/403 AppError. */
  guard(req: ProtectedRequest, tenant: OAuthTenant, opts: GuardOptions): Promise<AccessTokenClaims>;
  authorize: {
    start(raw: RawParams, tenant: OAuthTenant, session: SessionRecord | undefined): Promise<Outcome>;
    /** The open flow stored under `hash`, named `handle` in the outcomes it leads to. */
    load(hash: string, handle: string, tenant: OAuthTenant): Promise<LoadedFlow | undefined>;
    continue(flow: LoadedFlow, tenant: OAuthTenant, session: SessionRecord | undefined, opts: { consented: boolean }): Promise<Outcome>;
    deny(flow: LoadedFlow, tenant: OAuthTenant): Promise<Outcome>;
    /** prompt=create on a tenant whose sign-up is off. */
    refuseSignup(flow: LoadedFlow, tenant: OAuthTenant): Promise<Outcome>;
  };
  /** POST /device_authorization (RFC 8628 §3.1). */
  deviceAuthorization(req: OAuthHttpRequest, tenant: OAuthTenant): Promise<DeviceAuthorizationResponse>;
  /** The verification side of the device grant, for the sign-in engine (/activate). */
  device: {
    /** The pending authorization a typed user code names (rate-limited per address). */
    findByUserCode(tenant: OAuthTenant, userCode: string | undefined, ip: string): Promise<UserCodeResult>;
    load(tenant: OAuthTenant, hash: string): Promise<LoadedDevice | undefined>;
    decide(tenant: OAuthTenant, hash: string, decision: DeviceDecision): Promise<boolean>;
  };
  logout(params: LogoutParams, tenant: OAuthTenant): Promise<LogoutTarget>;
  metadata: {
    authorizationServer(issuer: string): Metadata;
    protectedResource(issuer: string): Metadata;
  };
}

/** Each grant receives only the stores it uses. */
export function grantTable(p: OAuthPorts): GrantTable {
  return new Map<string, GrantHandler>([
    [
      GRANT_TYPE.authorizationCode,
      authorizationCodeGrant({
        codes: p.signin,
        profiles: p.profiles,
        refreshTokens: p.refreshTokens,
        keys: p.keys,
        atomically: p.atomically,
        organizations: p.organizations,
      }),
    ],
    [GRANT_TYPE.clientCredentials, clientCredentialsGrant({ keys: p.keys, organizations: p.organizations })],
    [
      GRANT_TYPE.refreshToken,
      refreshTokenGrant({
        refreshTokens: p.refreshTokens,
        keys: p.keys,
        atomically: p.atomically,
        organizations: p.organizations,
        clientSettings: (t, c) => p.signin.clientSettings(t, c),
        profiles: p.profiles,
      }),
    ],
    [GRANT_TYPE.tokenExchange, tokenExchangeGrant({ keys: p.keys, revoked: p.revoked, atomically: p.atomically })],
    [
      GRANT_TYPE.deviceCode,
      deviceCodeGrant({
        devices: p.device.store,
        clientSettings: (t, c) => p.signin.clientSettings(t, c),
        recordSessionClient: (...a) => p.signin.recordSessionClient(...a),
        profiles: p.profiles,
        refreshTokens: p.refreshTokens,
        keys: p.keys,
      }),
    ],
    ...(p.preAuthorizedCodes ? [[GRANT_TYPE.preAuthorizedCode, preAuthorizedCodeGrant({ keys: p.keys, codes: p.preAuthorizedCodes })] as const] : []),
  ]);
}

export function composeOAuth(ports: OAuthPorts): OAuthServer {
  const grants = grantTable(ports);
  // Client authentication and /token apply a client's profile (FAPI 2.0), kept with its sign-in settings.
  const tokenDeps: OAuthDeps = { ...ports, clientProfile: async (tenantId, clientId) => (await ports.signin.clientSettings(tenantId, clientId)).profile };
  const features = { grantTypes: [...grants.keys()] };
  const authorizeDeps = () => ({
    clients: ports.clients,
    store: ports.signin,
    settings: ports.authorize,
    keys: ports.keys,
    remoteKeys: ports.remoteKeys,
    mfaPolicy: ports.mfaPolicy,
    organizations: ports.organizations,
    now: ports.clock.now(),
  });
  return {
    grants,
    ports,
    token: (req, tenant) => handleTokenRequest(req, tenant, tokenDeps, grants),
    introspect: (req, tenant) => handleIntrospection(req, tenant, tokenDeps),
    revoke: (req, tenant) => handleRevocation(req, tenant, tokenDeps),
    pushAuthorizationRequest: (req, tenant) =>
      handlePushedAuthorizationRequest(req, tenant, tokenDeps, { store: ports.signin, parTtlSeconds: ports.parTtlSeconds }),
    guard: (req, tenant, opts) => authorizeResourceRequest(req, tenant, opts, ports),
    authorize: {
      start: (raw, tenant, session) => startAuthorization(raw, tenant, session, authorizeDeps()),
      load: (hash, handle, tenant) => loadFlow(hash, handle, tenant, authorizeDeps()),
      continue: (flow, tenant, session, opts) => continueFlow(flow, tenant, session, authorizeDeps(), opts),
      deny: (flow, tenant) => denyFlow(flow, tenant),
      refuseSignup: (flow, tenant) => refuseSignup(flow, tenant),
    },
    deviceAuthorization: (req, tenant) => handleDeviceAuthorization(req, tenant, ports, ports.device),
    device: {
      findByUserCode: (tenant, userCode, ip) =>
        findByUserCode(tenant, userCode, ip, { store: ports.device.store, clients: ports.clients, attempts: ports.device.attempts, now: ports.clock.now() }),
      load: (tenant, hash) => loadPending(tenant, hash, { store: ports.device.store, clients: ports.clients, now: ports.clock.now() }),
      decide: (tenant, hash, decision) => decide(tenant, hash, decision, { store: ports.device.store, now: ports.clock.now() }),
    },
    logout: (params, tenant) => resolveLogout(params, tenant, { keys: ports.keys, clients: ports.clients, store: ports.signin }),
    metadata: {
      authorizationServer: (issuer) => authorizationServerMetadata(issuer, features),
      protectedResource: (issuer) => protectedResourceMetadata(issuer),
    },
  };
}
