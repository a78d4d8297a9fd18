import type { Config } from './config/index.js';
import { type Clock, systemClock } from './kernel/clock.js';
import { Envelope, EnvelopeError } from './kernel/crypto/envelope.js';
import { Keystore } from './kernel/crypto/keystore.js';
import { loadMasterKey, MasterKeyError } from './kernel/crypto/master-key.js';
import { type Db, migrate, openDatabase } from './storage/db.js';
import { EventRecorder } from './events/recorder.js';
import { ApiKeyRepo } from './storage/repos/api-keys.js';
import { EventRepo } from './storage/repos/events.js';
import { MetaRepo } from './storage/repos/meta.js';
import { SigningKeyRepo } from './storage/repos/signing-keys.js';
import { TenantRepo } from './storage/repos/tenants.js';
import { TenantService } from './tenants/service.js';
import { createOAuthModule, type OAuthModule } from './oauth-http/module.js';

/** Everything a running Keyhall needs, wired once per process. */
export interface Context {
  config: Config;
  clock: Clock;
  db: Db;
  envelope: Envelope;
  keystore: Keystore;
  repos: { tenants: TenantRepo; signingKeys: SigningKeyRepo; apiKeys: ApiKeyRepo; meta: MetaRepo; events: EventRepo };
  /** Writes audit events inside the caller's transaction. */
  events: EventRecorder;
  tenants: TenantService;
  /** OAuth clients, token ports and services (src/oauth-http/module.ts). */
  oauth: OAuthModule;
  close(): Promise<void>;
}

const MASTER_KEY_CHECK = 'master_key_check';

/** Opens the database, migrates it, loads the master key and checks it against the database. */
export async function createContext(config: Config, opts: { clock?: Clock } = {}): Promise<Context> {
  const clock = opts.clock ?? systemClock;
  const masterKey = loadMasterKey({ env: config.masterKey, dataDir: config.dataDir, allowKeyFile: !config.databaseUrl });
  const envelope = new Envelope(masterKey);
  masterKey.fill(0);
  const db = openDatabase(config);
  try {
    await migrate(db);
    const meta = new MetaRepo(db.kysely);
    const check = await meta.setIfAbsent(MASTER_KEY_CHECK, envelope.encrypt('keyhall', MASTER_KEY_CHECK));
    try {
      envelope.decrypt(check, MASTER_KEY_CHECK);
    } catch (err) {
      if (err instanceof EnvelopeError) {
        throw new MasterKeyError('the master key does not match the one this database was created with');
      }
      throw err;
    }
    const signingKeys = new SigningKeyRepo(db.kysely);
    const keystore = new Keystore(signingKeys, envelope, clock, config.cacheTtlMs);
    const events = new EventRepo(db.kysely, db.dialect);
    return {
      config,
      clock,
      db,
      envelope,
      keystore,
      repos: { tenants: new TenantRepo(db.kysely), signingKeys, apiKeys: new ApiKeyRepo(db.kysely), meta, events },
      events: new EventRecorder(events, clock),
      tenants: new TenantService(db, keystore, clock, config.keyOverlapSeconds * 1000),
      oauth: createOAuthModule(db, clock, keystore, config),
      close: () => db.close(),
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
