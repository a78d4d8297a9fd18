/**
 * The composition root: the one place that builds storage, keys, the event recorder, outbound
 * HTTP, the OAuth server, the sign-in, management and SCIM services and the webhook dispatcher,
 * and hands each consumer the narrow pieces it uses.
 */
import { TransferService } from './transfers/service.js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Config } from './config/index.js';
import { ConsoleOverview } from './console/overview.js';
import { ConsoleAdmins } from './console/service.js';
import { ProviderService } from './connect/providers.js';
import { UpstreamClient } from './upstream/client.js';
import { VaultService } from './connect/vault.js';
import { CredentialService, STATUS_LIST_SIZE } from './credentials/service.js';
import { createEgressAgent, type EgressAgent } from './egress/agent.js';
import { createTxtResolver, type TxtResolver } from './egress/dns.js';
import { type EgressPolicy, type EgressResolver, parseEgressAllowlist } from './egress/policy.js';
import { checkEgressUrlResolved } from './egress/url.js';
import { devMailboxTransport } from './email/dev-mailbox.js';
import { EmailSender } from './email/sender.js';
import { EmailService } from './email/service.js';
import { smtpTransport } from './email/transport.js';
import { EventRecorder } from './events/recorder.js';
import { RemoteJwksCache } from './http/oauth/remote-jwks.js';
import { type Clock, systemClock } from './kernel/clock.js';
import { Envelope, EnvelopeError } from './kernel/crypto/envelope.js';
import { Keystore } from './kernel/crypto/keystore.js';
import { loadMasterKey, MasterKeyError } from './kernel/crypto/master-key.js';
import { createLogger, type LogDestination, type Logger, openLogDestination } from './kernel/logging.js';
import { TenantResolver } from './kernel/tenancy.js';
import { ApiKeyService } from './management/api-keys/service.js';
import { ManagementAuth } from './management/auth.js';
import { ClientService } from './management/clients/service.js';
import { TokenSettingsService } from './management/clients/settings.js';
import type { ManagementDeps } from './management/common.js';
import { DirectoryService } from './management/directory/service.js';
import { EventFeedService } from './management/events/service.js';
import { InvitationService } from './management/invitations/service.js';
import { MemberService } from './management/members/service.js';
import { OrganizationService } from './management/organizations/service.js';
import { ResourceServerService } from './management/resource-servers/service.js';
import { clientGrantsOf, grantsOf, RoleService } from './management/roles/service.js';
import { ClientGrantService } from './management/roles/client-grants.js';
import { SsoConnectionService } from './management/sso/service.js';
import { UserService } from './users/service.js';
import { WebauthnPolicyService } from './management/webauthn-policy/service.js';
import { MfaPolicyService } from './management/mfa-policy/service.js';
import { SigninPolicyService } from './management/signin-policy/service.js';
import { EmailSigninService } from './signup/service.js';
import { BrandingTextsService } from './management/branding/service.js';
import { WebhookService } from './management/webhooks/service.js';
import { CachedClientSettings, CachedClientStore } from './oauth/client-cache.js';
import { CachedResourceServers } from './oauth/resource-server-cache.js';
import { composeOAuth, type OAuthServer } from './oauth/compose.js';
import { DpopNonces } from './oauth/dpop/nonce.js';
import { oauthErrors } from './oauth/errors.js';
import { TenantLifetimes } from './oauth/token/lifetimes.js';
import type { Atomically } from './oauth/token/types.js';
import { ScimAuth } from './scim/auth.js';
import { ScimGroups } from './scim/groups.js';
import type { ScimServices } from './scim/routes.js';
import { ScimUsers } from './scim/users.js';
import { loadMetadata } from './screens/mfa/metadata.js';
import { loadTrustAnchors } from './screens/mfa/trust.js';
import { MfaService } from './screens/mfa/service.js';
import { SigninService } from './screens/service.js';
import { SsoLinkService } from './sso/link.js';
import { SsoSigninService } from './sso/service.js';
import { SocialSigninService } from './social/service.js';
import { SocialConnectionService } from './management/social/service.js';
import { SigninEngine } from './signin/engine.js';
import { databaseNow, type Db, migrate, openDatabase, type StatementListener } from './storage/db.js';
import { repos } from './storage/repos/index.js';
import type { TenantRepo } from './storage/repos/tenants.js';
import { TenantService } from './tenants/service.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import { LogoutDispatcher } from './logout/dispatcher.js';
import { logoutOutbox } from './logout/outbox.js';
import { ClientDocuments, DocumentClientStore } from './mcp/cimd.js';
import { McpRegistrationService } from './mcp/registration.js';
import type { McpToolDeps } from './mcp/tools.js';
import { BrowserOrigins } from './oauth/cors.js';
import { webhookOutbox } from './webhooks/outbox.js';
import { RetrySchedule } from './webhooks/schedule.js';

/** The /v1 services, one per feature module. */
export interface ManagementServices {
  auth: ManagementAuth;
  organizations: OrganizationService;
  users: UserService;
  members: MemberService;
  /** Invitations to an organization (docs/invitations.md; also the /invitations/accept page). */
  invitations: InvitationService;
  apiKeys: ApiKeyService;
  events: EventFeedService;
  directory: DirectoryService;
  clients: ClientService;
  tokenSettings: TokenSettingsService;
  resourceServers: ResourceServerService;
  /** Organizations' roles, the default role for new members and /v1/authorize_check. */
  roles: RoleService;
  /** Client_credentials clients bound to an organization with roles there. */
  clientGrants: ClientGrantService;
  webhooks: WebhookService;
  webauthnPolicy: WebauthnPolicyService;
  mfaPolicy: MfaPolicyService;
  /** The sign-in policy: self sign-up, passwordless by email, verified email required (docs/signup.md; read by the hosted pages). */
  signinPolicy: SigninPolicyService;
  /** The hosted pages' language: default locale and tenant texts (also read by every hosted page). */
  branding: BrandingTextsService;
  /** Imports and exports (docs/import-export.md; also the CLI's `import` and `export`). */
  transfers: TransferService;
  connectProviders: ProviderService;
  /** The connected-accounts vault (also used by the /connect screens). */
  vault: VaultService;
  sso: SsoConnectionService;
  /** Social connections, the account-linking setting and users' linked identities (docs/social.md). */
  social: SocialConnectionService;
  credentials: CredentialService;
  /** MCP client onboarding: /register and its policy (also /v1/mcp/settings). */
  mcp: McpRegistrationService;
  /** Email: the sender settings, the outbox, verification and password reset (docs/email.md). */
  email: EmailService;
}

/** Everything a running Keyhall needs, wired once per process. */
export interface Context {
  config: Config;
  clock: Clock;
  log: Logger;
  /** Where this process's log lines go (the HTTP access log too); flushed on close. */
  logs: LogDestination;
  db: Db;
  envelope: Envelope;
  keystore: Keystore;
  /** Writes audit events inside the caller's transaction. */
  events: EventRecorder;
  /** Tenants by host (the HTTP tenant hook) and tenant administration (CLI, bootstrap). */
  tenantRepo: TenantRepo;
  /** This instance's host → tenant cache; tenant changes made here invalidate it at once. */
  tenantResolver: TenantResolver;
  tenants: TenantService;
  /** The OAuth/OpenID server composed from its ports (src/oauth/compose.ts). */
  oauth: OAuthServer;
  /** Hosted sign-in: logins, sessions, consents, profiles, branding. */
  signin: SigninService;
  /** What the /mcp tools use (src/mcp/tools.ts). */
  mcpTools: McpToolDeps;
  /** The OID4VCI credential issuer (offers, issuance, status lists). */
  credentials: CredentialService;
  /** Passkeys, TOTP, recovery codes and the MFA policy (docs/passkeys.md). */
  mfa: MfaService;
  /** Enterprise SSO sign-in: upstream round trips and just-in-time provisioning. */
  sso: SsoSigninService;
  /** Social sign-in: the tenant's connections on the hosted login (docs/social.md). */
  social: SocialSigninService;
  /** The sign-in engine: every way in, its steps and its returns (src/signin/). */
  engine: SigninEngine;
  /** Explicit SSO links from /sessions: what is linked and offered, and unlinking. */
  ssoLinks: SsoLinkService;
  management: ManagementServices;
  /** The console's administrators and setup links (docs/console.md). */
  admins: ConsoleAdmins;
  /** The console overview's exact counts. */
  overview: ConsoleOverview;
  /** SCIM 2.0: token authentication and the Users/Groups services. */
  scim: ScimServices;
  /** Outbound HTTP: the egress policy, the resolver it checks with, and the guarded agent. */
  egress: { policy: EgressPolicy; resolver?: EgressResolver; agent: EgressAgent };
  /** The webhook delivery loop of this instance (started by the server, not by the CLI). */
  dispatcher: Dispatcher;
  /** The back-channel logout delivery loop of this instance (started by the server, not by the CLI). */
  logoutDispatcher: LogoutDispatcher;
  /** The email sending loop of this instance (started by the server, not by the CLI). */
  emailSender: EmailSender;
  /** Email verification, password reset and the outbox writer (also ManagementServices.email). */
  email: EmailService;
  /** Self sign-up and passwordless sign-in by email (docs/signup.md). */
  emailSignin: EmailSigninService;
  /** The origins browser apps may call /token, /revoke and /userinfo from (CORS). */
  browserOrigins: BrowserOrigins;
  close(): Promise<void>;
}

const MASTER_KEY_CHECK = 'master_key_check';
const NONCE_KEY = 'dpop_nonce_key';

export interface ContextOptions {
  clock?: Clock;
  /** How outbound host names are resolved (tests inject one to stage DNS rebinding). */
  egressResolver?: EgressResolver;
  /** TXT lookups for domain verification (tests inject one; default: KEYHALL_DNS_SERVERS or the system's). */
  txtResolver?: TxtResolver;
  /** Where log lines go instead of stdout (tests capture them). */
  logStream?: NodeJS.WritableStream;
  /** Told every SQL statement this instance runs (tests and the bench count them per request). */
  onStatement?: StatementListener;
}

/** The master key must be the one the database was created with. */
async function checkMasterKey(db: Db, envelope: Envelope): Promise<void> {
  const check = await repos(db.kysely, db.dialect).meta.setIfAbsent(MASTER_KEY_CHECK, envelope.encrypt('keyhall', MASTER_KEY_CHECK));
  try {
    envelope.decrypt(check, MASTER_KEY_CHECK);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new MasterKeyError('the master key does not match the one this database was created with');
    throw err;
  }
}

/** The DPoP nonce HMAC key: made once, shared by all instances through the database, encrypted. */
function nonceSecret(db: Db, envelope: Envelope): () => Promise<Buffer> {
  return async () => {
    const stored = await repos(db.kysely, db.dialect).meta.setIfAbsent(NONCE_KEY, envelope.encrypt(randomBytes(32).toString('base64'), NONCE_KEY));
    return Buffer.from(envelope.decrypt(stored, NONCE_KEY), 'base64');
  };
}

/**
 * One transaction for the OAuth core: its stores bound to it, and its audit events recorded in
 * it (actor: the client named in the event, as `system`).
 */
function oauthTransactions(db: Db, events: EventRecorder): Atomically {
  return (fn) =>
    events.transaction(db.kysely, (trx) =>
      fn({
        refreshTokens: repos(trx, db.dialect).refreshTokens,
        revoked: repos(trx, db.dialect).revokedTokens,
        audit: async (event) => {
          const clientId = typeof event.data.client_id === 'string' ? event.data.client_id : null;
          await events.record(trx, {
            tenantId: event.tenantId,
            type: event.type,
            organizationId: null,
            actor: { type: 'system', id: clientId },
            data: event.data,
          });
        },
      }),
    );
}

/** The registration-time egress check of a URL a client registers for Keyhall to call (`jwks_uri`, `backchannel_logout_uri`). */
function clientUrlCheck(policy: EgressPolicy, resolver: EgressResolver | undefined): (url: string, field: string) => Promise<string> {
  return async (url, field) => {
    const decision = await checkEgressUrlResolved(url, policy, { field, resolver });
    if (!decision.ok) throw oauthErrors.invalidClientMetadata(`${field}: ${decision.reason}`);
    return decision.url;
  };
}

/**
 * On PostgreSQL, due-ness and leases are judged by the database's clock, which every instance
 * shares. On SQLite (one process) the dispatcher uses the clock that stamps deliveries due, so a
 * step of the system clock (a laptop resuming from sleep) moves both together.
 */
function dispatcherClock(db: Db, injected: boolean): (() => Promise<number>) | undefined {
  if (injected || db.dialect !== 'postgres') return undefined;
  return () => databaseNow(db);
}

/** Opens the database, migrates it, checks the master key, and wires every module. */
export async function createContext(config: Config, opts: ContextOptions = {}): Promise<Context> {
  const clock = opts.clock ?? systemClock;
  const logs = openLogDestination(opts.logStream);
  const log = createLogger(config.logLevel, logs.stream);
  const masterKey = loadMasterKey({ env: config.masterKey, dataDir: config.dataDir, allowKeyFile: !config.databaseUrl });
  const envelope = new Envelope(masterKey);
  masterKey.fill(0);
  const db = openDatabase({ ...config, onStatement: opts.onStatement });
  try {
    await migrate(db);
    await checkMasterKey(db, envelope);
    const r = repos(db.kysely, db.dialect);
    const keystore = new Keystore(r.signingKeys, envelope, clock, config.cacheTtlMs, config.cacheMaxTenants);
    const events = new EventRecorder(r.events, clock);
    const schedule = new RetrySchedule(config.webhookRetrySchedule);
    events.onRecorded(webhookOutbox(clock, db.dialect, schedule));
    // Back-channel logout: every session end writes the logout tokens it owes (src/logout/).
    const logoutSchedule = new RetrySchedule(config.logoutRetrySchedule);
    events.onRecorded(logoutOutbox(clock, db.dialect, logoutSchedule));

    const policy = parseEgressAllowlist(config.egressAllow);
    const egress = { policy, resolver: opts.egressResolver, agent: createEgressAgent(policy, { resolver: opts.egressResolver }) };
    const upstream = new UpstreamClient({ agent: egress.agent, policy, resolver: opts.egressResolver, timeoutMs: config.upstreamTimeoutMs }, clock);

    const clients = new CachedClientStore(r.oauthClients, config.cacheTtlMs, config.cacheMaxClients);
    const clientSettings = new CachedClientSettings(
      (tenantId, clientId) => r.signinStore.clientSettings(tenantId, clientId),
      config.cacheTtlMs,
      config.cacheMaxClients,
    );
    const browserOrigins = new BrowserOrigins(r.oauthClients, clients, config.cacheTtlMs, config.cacheMaxTenants);
    const resourceServers = new CachedResourceServers(r.resourceServers, config.cacheTtlMs, config.cacheMaxClients);
    const tenants = new TenantService(db, keystore, clock, config.keyOverlapSeconds * 1000, events);
    const defaults = {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      idTokenClaims: 'scoped' as const,
    };
    const lifetimes = new TenantLifetimes(r.oauthSettings, defaults, config.cacheTtlMs, config.cacheMaxTenants);
    const credentials = new CredentialService({
      db,
      clock,
      events,
      envelope,
      keys: keystore,
      settings: {
        offerTtlSeconds: config.credentialOfferTtlSeconds,
        nonceTtlSeconds: config.credentialNonceTtlSeconds,
        statusListTtlSeconds: config.statusListTtlSeconds,
        statusListSize: STATUS_LIST_SIZE,
      },
    });
    const oauth = composeOAuth({
      // A URL client_id names a Client ID Metadata Document (src/mcp/cimd.ts).
      clients: new DocumentClientStore(clients, { db, clock, events, documents: new ClientDocuments(egress.agent, policy) }),
      refreshTokens: r.refreshTokens,
      replay: r.replay,
      revoked: r.revokedTokens,
      keys: keystore,
      clock,
      settings: defaults,
      lifetimes,
      resourceServers,
      // A set lacking a key is fetched again at most once per KEYHALL_CACHE_TTL_MS.
      remoteKeys: new RemoteJwksCache(egress.agent, policy, () => performance.now(), { minRefreshMs: config.cacheTtlMs }),
      ...(config.dpopNonce ? { dpopNonces: new DpopNonces(nonceSecret(db, envelope)) } : {}),
      atomically: oauthTransactions(db, events),
      signin: clientSettings.over(r.signinStore),
      authorize: { codeTtlSeconds: config.codeTtlSeconds, flowTtlSeconds: config.loginFlowTtlSeconds },
      parTtlSeconds: config.parTtlSeconds,
      // The sign-in service is built below; profiles are read only at request time.
      profiles: { profile: (tenantId, userId) => signin.profile(tenantId, userId) },
      mfaPolicy: { required: async (tenantId, userId, organizationId) => (await mfa.policyFor(tenantId, userId, organizationId)) === 'required' },
      // Roles are read at each issuance: a change applies to the next token (docs/authorization.md).
      organizations: {
        grants: (tenantId, organizationId, userId) => grantsOf(r, tenantId, organizationId, userId),
        clientGrants: (tenantId, organizationId, roles, audience) => clientGrantsOf(r, resourceServers, tenantId, organizationId, roles, audience),
        enter: (tenantId, sessionId, organizationId) => r.sessions.enterOrganization(tenantId, sessionId, organizationId),
      },
      preAuthorizedCodes: credentials,
      device: {
        store: r.deviceCodes,
        attempts: r.loginFailures,
        settings: { codeTtlSeconds: config.deviceCodeTtlSeconds, maxUndecidedPerClient: config.deviceMaxUndecidedPerClient },
      },
    });

    const signin = new SigninService(db, clock, events, {
      sessionIdleSeconds: config.sessionIdleSeconds,
      sessionMaxSeconds: config.sessionMaxSeconds,
      loginMaxFailuresPerAccount: config.loginMaxFailuresPerAccount,
      loginMaxFailuresPerIp: config.loginMaxFailuresPerIp,
      loginFailureWindowSeconds: config.loginFailureWindowSeconds,
    });

    const mfa = new MfaService(db, clock, events, envelope, {
      trustAnchors: loadTrustAnchors(config),
      metadata: await loadMetadata(config, clock.now(), log),
      log,
    });
    const sso = new SsoSigninService({ db, clock, events, envelope, upstream, signin, mfa });
    const ssoLinks = new SsoLinkService({ db, clock, events });

    const deps: ManagementDeps = { db, clock, events };
    const emailSender = new EmailSender({
      outbox: r.emailOutbox,
      transport: config.smtpUrl ? smtpTransport(config.smtpUrl) : devMailboxTransport(r.emailDevMailbox, clock, log),
      clock,
      log,
      schedule: config.emailRetrySchedule,
      intervalMs: config.dispatchIntervalMs,
      // A message is recorded sent or failed together with its feed event (identifiers only).
      atomically: (fn) =>
        events.transaction(db.kysely, (trx) =>
          fn({
            outbox: repos(trx, db.dialect).emailOutbox,
            event: async (e, outcome, detail) => {
              await events.record(trx, {
                tenantId: e.tenantId,
                type: outcome === 'sent' ? 'email.sent' : 'email.failed',
                organizationId: null,
                actor: { type: 'system', id: null },
                data: {
                  email_id: e.id,
                  template: e.template,
                  message_id: e.messageId,
                  user_id: e.userId,
                  attempts: detail.attempts,
                  ...(outcome === 'sent' ? { transport: detail.transport } : { last_error: detail.error }),
                },
              });
            },
          }),
        ),
    });
    const email = new EmailService({
      db,
      clock,
      events,
      sender: emailSender,
      defaultFrom: config.emailFrom,
      onError: (err) => log.error({ err: (err as Error).message }, 'password reset email could not be queued'),
    });
    const vault = new VaultService({
      db,
      clock,
      events,
      envelope,
      upstream,
      settings: {
        refreshSkewMs: config.vaultRefreshSkewSeconds * 1000,
        // Waiting for another caller's refresh: its upstream request's limit and some margin.
        waitMs: config.upstreamTimeoutMs + 5000,
        leaseMs: config.upstreamTimeoutMs * 3,
        flowTtlMs: config.loginFlowTtlSeconds * 1000,
      },
      onRevokeFailed: (accountId, err) => log.warn({ account_id: accountId, err: (err as Error).message }, 'upstream token revocation failed'),
    });
    const social = new SocialSigninService({ db, clock, events, envelope, upstream, signin, mfa, vault, cacheTtlMs: config.cacheTtlMs });
    const auth = new ManagementAuth(r.apiKeys, r.rateLimits, clock, config.apiRateLimit);
    const clientService = new ClientService(
      r.oauthClients,
      clock,
      (tenantId, clientId) => {
        clients.invalidate(tenantId, clientId);
        clientSettings.invalidate(tenantId, clientId);
        browserOrigins.invalidate(tenantId);
      },
      clientUrlCheck(policy, opts.egressResolver),
      r.signinStore,
      (fn) => events.transaction(db.kysely, (trx) => fn(repos(trx, db.dialect).oauthClients, repos(trx, db.dialect).signinStore, (e) => events.record(trx, e))),
    );
    const apiKeys = new ApiKeyService(deps, r.apiKeys);
    const users = new UserService({ ...deps, vault, holdsEveryPermission: (tenantId, actor) => apiKeys.holdsEveryPermission(tenantId, actor) });
    const invitations = new InvitationService({ ...deps, email, sender: emailSender, users });
    const management: ManagementServices = {
      auth,
      organizations: new OrganizationService({ ...deps, vault }, opts.txtResolver ?? createTxtResolver(config.dnsServers)),
      users,
      members: new MemberService({ ...deps, vault }),
      invitations,
      apiKeys,
      events: new EventFeedService(r.events),
      directory: new DirectoryService(deps),
      clients: clientService,
      tokenSettings: new TokenSettingsService(deps, lifetimes),
      resourceServers: new ResourceServerService(
        deps,
        (tenantId, alg, actor) => tenants.ensureKeys(tenantId, [alg], actor),
        (tenantId, identifier) => resourceServers.invalidate(tenantId, identifier),
      ),
      roles: new RoleService(deps),
      clientGrants: new ClientGrantService(deps, (tenantId, clientId) => clients.invalidate(tenantId, clientId)),
      webhooks: new WebhookService({ ...deps, envelope, egressPolicy: policy, resolver: opts.egressResolver, attemptLimit: schedule.attemptLimit }),
      webauthnPolicy: new WebauthnPolicyService(deps),
      mfaPolicy: new MfaPolicyService(deps),
      signinPolicy: new SigninPolicyService(deps, { ttlMs: config.cacheTtlMs, maxTenants: config.cacheMaxTenants }),
      branding: new BrandingTextsService(deps, { ttlMs: config.cacheTtlMs, maxTenants: config.cacheMaxTenants }),
      transfers: new TransferService({
        ...deps,
        envelope,
        exportTtlMs: config.exportTtlSeconds * 1000,
        holdsEveryPermission: (tenantId, actor) => apiKeys.holdsEveryPermission(tenantId, actor),
      }),
      connectProviders: new ProviderService({ ...deps, envelope, egressPolicy: policy, resolver: opts.egressResolver, upstream }),
      vault,
      sso: new SsoConnectionService({ ...deps, envelope, upstream }),
      social: new SocialConnectionService({ ...deps, envelope, upstream, onChanged: (tenantId) => social.invalidateButtons(tenantId) }),
      credentials,
      mcp: new McpRegistrationService({
        db,
        clock,
        clients: clientService,
        authenticate: (tenantId, authorization) => auth.authenticate(tenantId, authorization),
      }),
      email,
    };
    const mcpTools: McpToolDeps = { db, events, vault, credentials, log };

    const admins = new ConsoleAdmins(deps, management.users);
    const emailSignin = new EmailSigninService({
      db,
      clock,
      events,
      email,
      policy: management.signinPolicy,
      ssoRequired: async (tenantId, address) => {
        const realm = await sso.homeRealm(tenantId, address);
        return realm.kind === 'unavailable' || (realm.kind === 'sso' && realm.required);
      },
      onError: (err) => log.error({ err: (err as Error).message }, 'sign-in email could not be queued'),
    });
    const engine = new SigninEngine({
      flows: r.signinFlows,
      authorize: oauth.authorize,
      device: oauth.device,
      signin,
      mfa,
      sso,
      social,
      console: admins,
      invitations,
      emailSignin,
      requestVerification: async (tenant, userId) => {
        await events.transaction(db.kysely, async (trx) => {
          const user = await repos(trx, db.dialect).users.find(tenant.id, userId);
          // The engine knows the tenant by id and issuer; the sender's default address needs its host.
          if (user && !user.emailVerified) await email.queueVerification(trx, { ...tenant, host: new URL(tenant.issuer).host }, user);
        });
        email.poke();
      },
      clock,
      flowTtlSeconds: config.loginFlowTtlSeconds,
    });
    const scimDeps = { db: db.kysely, dialect: db.dialect, clock, events, vault };
    const scim: ScimServices = { auth: new ScimAuth(r.directoryConnections, clock), users: new ScimUsers(scimDeps), groups: new ScimGroups(scimDeps) };

    const dispatcher = new Dispatcher({
      deliveries: r.webhookDeliveries,
      endpoints: r.webhookEndpoints,
      envelope,
      agent: egress.agent,
      clock,
      log,
      schedule,
      timeoutMs: config.webhookTimeoutMs,
      intervalMs: config.dispatchIntervalMs,
      dueNow: dispatcherClock(db, opts.clock !== undefined),
      // A delivery that used up its attempts is recorded as failed together with its feed event.
      atomically: (fn) =>
        events.transaction(db.kysely, (trx) =>
          fn({
            deliveries: repos(trx, db.dialect).webhookDeliveries,
            failed: async (d, last) => {
              await events.record(trx, {
                tenantId: d.tenantId,
                type: 'webhook_delivery.failed',
                organizationId: d.organizationId,
                actor: { type: 'system', id: null },
                data: {
                  endpoint_id: d.endpointId,
                  delivery_id: d.id,
                  event_id: d.eventId,
                  event_type: d.eventType,
                  attempts: last.attempts,
                  last_status_code: last.statusCode,
                  last_error: last.error,
                },
              });
            },
          }),
        ),
    });

    const logoutDispatcher = new LogoutDispatcher({
      deliveries: r.logoutDeliveries,
      issuerOf: async (tenantId) => (await r.tenants.findById(tenantId))?.issuer,
      clientSettings: (tenantId, clientId) => clientSettings.get(tenantId, clientId),
      keys: keystore,
      agent: egress.agent,
      clock,
      schedule: logoutSchedule,
      timeoutMs: config.webhookTimeoutMs,
      intervalMs: config.dispatchIntervalMs,
      log,
      dueNow: dispatcherClock(db, opts.clock !== undefined),
    });

    const tenantResolver = new TenantResolver(r.tenants, config.cacheTtlMs, () => performance.now(), config.cacheMaxTenants);
    tenants.onChanged((id) => tenantResolver.invalidate(id));

    return {
      config,
      clock,
      log,
      logs,
      db,
      envelope,
      keystore,
      events,
      tenantRepo: r.tenants,
      tenantResolver,
      tenants,
      oauth,
      browserOrigins,
      signin,
      mcpTools,
      credentials,
      mfa,
      sso,
      social,
      engine,
      ssoLinks,
      management,
      admins,
      overview: new ConsoleOverview(deps),
      scim,
      egress,
      dispatcher,
      logoutDispatcher,
      emailSender,
      email,
      emailSignin,
      close: async () => {
        await management.transfers.settle();
        await egress.agent.close();
        await db.close();
        logs.flush();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
