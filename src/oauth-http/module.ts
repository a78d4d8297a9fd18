/** Wiring of the OAuth core to storage and the keystore, once per process (used by context.ts). */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/index.js';
import { isEventType } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import type { Keystore } from '../kernel/crypto/keystore.js';
import { ClientService } from '../management/clients/service.js';
import { TokenSettingsService } from '../management/clients/settings.js';
import { CachedClientStore } from '../oauth/client-cache.js';
import { DpopNonces } from '../oauth/dpop/nonce.js';
import { oauthErrors } from '../oauth/errors.js';
import { TenantLifetimes } from '../oauth/token/lifetimes.js';
import type { OAuthDeps, OAuthEvent } from '../oauth/token/types.js';
import type { Db } from '../storage/db.js';
import { MetaRepo } from '../storage/repos/meta.js';
import { OAuthClientRepo } from '../storage/repos/oauth-clients.js';
import { OAuthRefreshTokenRepo } from '../storage/repos/oauth-refresh-tokens.js';
import { OAuthReplayRepo, OAuthRevokedTokenRepo } from '../storage/repos/oauth-replay.js';
import { OAuthSettingsRepo } from '../storage/repos/oauth-settings.js';
import { SigninStoreRepo } from '../storage/repos/signin-store.js';
import type { EgressAgent } from '../webhooks/egress-agent.js';
import { checkEgressUrlResolved, type EgressPolicy, type EgressResolver } from '../webhooks/egress.js';
import { RemoteJwksCache } from './remote-jwks.js';

export interface OAuthModule {
  deps: OAuthDeps;
  clients: ClientService;
  /** Per-tenant token lifetimes (/v1/oauth/settings). */
  settings: TokenSettingsService;
  clientRepo: OAuthClientRepo;
  /** Where audit events of the OAuth core go; replaced when the event catalogue is wired. */
  setEventSink(sink: (event: OAuthEvent) => void | Promise<void>): void;
}

const NONCE_KEY = 'dpop_nonce_key';

/** The DPoP nonce HMAC key: made once, shared by all instances through the database, encrypted. */
function nonceSecret(db: Db, envelope: Envelope): () => Promise<Buffer> {
  return async () => {
    const meta = new MetaRepo(db.kysely);
    const stored = await meta.setIfAbsent(NONCE_KEY, envelope.encrypt(randomBytes(32).toString('base64'), NONCE_KEY));
    return Buffer.from(envelope.decrypt(stored, NONCE_KEY), 'base64');
  };
}

export interface OAuthModuleInput {
  db: Db;
  clock: Clock;
  keystore: Keystore;
  envelope: Envelope;
  config: Config;
  /** The audit trail: OAuth events are recorded once the catalogue lists them. */
  events?: EventRecorder;
  /** Outbound HTTP for client `jwks_uri`s: the policy, its resolver and the guarded agent. */
  egress: { policy: EgressPolicy; resolver?: EgressResolver | undefined; agent: EgressAgent };
}

/** The registration-time egress check of a `jwks_uri`. */
function jwksUriCheck(egress: OAuthModuleInput['egress']): (url: string) => Promise<string> {
  return async (url) => {
    const decision = await checkEgressUrlResolved(url, egress.policy, { field: 'jwks_uri', resolver: egress.resolver });
    if (!decision.ok) throw oauthErrors.invalidClientMetadata(`jwks_uri: ${decision.reason}`);
    return decision.url;
  };
}

/**
 * Records OAuth events (`token.exchanged`, `refresh_token.reused`, `token.revoked`) in the audit
 * trail. The acting party is the OAuth client (`system` actor with the client_id).
 */
function auditSink(db: Db, events: EventRecorder): (event: OAuthEvent) => Promise<void> {
  return async (event) => {
    if (!isEventType(event.type)) return;
    const clientId = typeof event.data.client_id === 'string' ? event.data.client_id : null;
    await events.transaction(db.kysely, (trx) =>
      events.record(trx, { tenantId: event.tenantId, type: event.type, organizationId: null, actor: { type: 'system', id: clientId }, data: event.data }),
    );
  };
}

export function createOAuthModule({ db, clock, keystore, envelope, config, events, egress }: OAuthModuleInput): OAuthModule {
  const clientRepo = new OAuthClientRepo(db.kysely);
  const clients = new CachedClientStore(clientRepo, config.cacheTtlMs);
  const settingsRepo = new OAuthSettingsRepo(db.kysely);
  const defaults = { accessTokenTtlSeconds: config.accessTokenTtlSeconds, refreshTokenTtlSeconds: config.refreshTokenTtlSeconds };
  const lifetimes = new TenantLifetimes(settingsRepo, defaults, config.cacheTtlMs);
  const deps: OAuthDeps = {
    clients,
    refreshTokens: new OAuthRefreshTokenRepo(db.kysely),
    replay: new OAuthReplayRepo(db.kysely),
    revoked: new OAuthRevokedTokenRepo(db.kysely),
    keys: keystore,
    clock,
    settings: defaults,
    lifetimes,
    // A set lacking a key is fetched again at most once per KEYHALL_CACHE_TTL_MS.
    remoteKeys: new RemoteJwksCache(egress.agent, egress.policy, () => performance.now(), { minRefreshMs: config.cacheTtlMs }),
    ...(config.dpopNonce ? { dpopNonces: new DpopNonces(nonceSecret(db, envelope)) } : {}),
    ...(events ? { onEvent: auditSink(db, events) } : {}),
  };
  return {
    deps,
    clients: new ClientService(
      clientRepo,
      clock,
      (tenantId, clientId) => clients.invalidate(tenantId, clientId),
      jwksUriCheck(egress),
      new SigninStoreRepo(db.kysely),
      (fn) => db.kysely.transaction().execute((trx) => fn(new OAuthClientRepo(trx), new SigninStoreRepo(trx))),
    ),
    settings: new TokenSettingsService(settingsRepo, lifetimes, clock),
    clientRepo,
    setEventSink: (sink) => {
      deps.onEvent = sink;
    },
  };
}
