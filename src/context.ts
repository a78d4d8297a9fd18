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
import { createSigninModule, type SigninModule } from './screens/module.js';
import { createEgressAgent, type EgressAgent } from './webhooks/egress-agent.js';
import { type EgressPolicy, type EgressResolver, parseEgressAllowlist } from './webhooks/egress-policy.js';
import { webhookOutbox } from './webhooks/outbox.js';

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
  /** Sign-in: PAR, /authorize, codes, hosted screens and sessions (src/screens/module.ts). */
  signin: SigninModule;
  /** Outbound HTTP: the egress policy, the resolver it checks with, and the guarded agent. */
  egress: { policy: EgressPolicy; resolver?: EgressResolver; agent: EgressAgent };
  close(): Promise<void>;
}

const MASTER_KEY_CHECK = 'master_key_check';

/** Opens the database, migrates it, loads the master key and checks it against the database. */
export interface ContextOptions {
  clock?: Clock;
  /** How outbound host names are resolved (tests inject one to stage DNS rebinding). */
  egressResolver?: EgressResolver;
}

export async function createContext(config: Config, opts: ContextOptions = {}): Promise<Context> {
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
    const signingKeys = new SigningKeyRepo(db.kysely, db.dialect);
    const keystore = new Keystore(signingKeys, envelope, clock, config.cacheTtlMs);
    const events = new EventRepo(db.kysely, db.dialect);
    const recorder = new EventRecorder(events, clock);
    recorder.onRecorded(webhookOutbox(clock, db.dialect, config.webhookRetrySchedule.length));
    const policy = parseEgressAllowlist(config.egressAllow);
    const agent = createEgressAgent(policy, { resolver: opts.egressResolver });
    return {
      config,
      clock,
      db,
      envelope,
      keystore,
      repos: { tenants: new TenantRepo(db.kysely), signingKeys, apiKeys: new ApiKeyRepo(db.kysely), meta, events },
      events: recorder,
      tenants: new TenantService(db, keystore, clock, config.keyOverlapSeconds * 1000, recorder),
      oauth: createOAuthModule({ db, clock, keystore, envelope, config, events: recorder, egress: { policy, resolver: opts.egressResolver, agent } }),
      signin: createSigninModule(db, clock, recorder, config),
      egress: { policy, resolver: opts.egressResolver, agent },
      close: async () => {
        await agent.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
