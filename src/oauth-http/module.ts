/** Wiring of the OAuth core to storage and the keystore, once per process (used by context.ts). */
import type { Config } from '../config/index.js';
import type { Clock } from '../kernel/clock.js';
import { randomBytes } from 'node:crypto';
import type { Envelope } from '../kernel/crypto/envelope.js';
import type { Keystore } from '../kernel/crypto/keystore.js';
import { ClientService } from '../management/clients/service.js';
import { CachedClientStore } from '../oauth/client-cache.js';
import { DpopNonces } from '../oauth/dpop/nonce.js';
import type { OAuthDeps, OAuthEvent } from '../oauth/token/types.js';
import type { Db } from '../storage/db.js';
import { MetaRepo } from '../storage/repos/meta.js';
import { OAuthClientRepo } from '../storage/repos/oauth-clients.js';
import { OAuthRefreshTokenRepo } from '../storage/repos/oauth-refresh-tokens.js';
import { OAuthReplayRepo, OAuthRevokedTokenRepo } from '../storage/repos/oauth-replay.js';

export interface OAuthModule {
  deps: OAuthDeps;
  clients: ClientService;
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

export function createOAuthModule(db: Db, clock: Clock, keystore: Keystore, envelope: Envelope, config: Config): OAuthModule {
  const clientRepo = new OAuthClientRepo(db.kysely);
  const clients = new CachedClientStore(clientRepo, config.cacheTtlMs);
  const deps: OAuthDeps = {
    clients,
    refreshTokens: new OAuthRefreshTokenRepo(db.kysely),
    replay: new OAuthReplayRepo(db.kysely),
    revoked: new OAuthRevokedTokenRepo(db.kysely),
    keys: keystore,
    clock,
    settings: { accessTokenTtlSeconds: config.accessTokenTtlSeconds, refreshTokenTtlSeconds: config.refreshTokenTtlSeconds },
    ...(config.dpopNonce ? { dpopNonces: new DpopNonces(nonceSecret(db, envelope)) } : {}),
  };
  return {
    deps,
    clients: new ClientService(clientRepo, clock, (tenantId, clientId) => clients.invalidate(tenantId, clientId)),
    clientRepo,
    setEventSink: (sink) => {
      deps.onEvent = sink;
    },
  };
}
