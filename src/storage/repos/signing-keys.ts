import { type Kysely, sql } from 'kysely';
import type { StoredSigningKey } from '../../kernel/crypto/keystore.js';
import type { Dialect } from '../db.js';
import { cast, codec } from '../codec.js';
import type { Database } from '../schema.js';

const PUBLISH_SLACK_MS = 24 * 3600 * 1000;

/** The stored form of a signing key is the keystore's own port type. */
export type SigningKeyRecord = StoredSigningKey;

const stored = codec<SigningKeyRecord>()('signing_keys', {
  kid: true,
  tenantId: true,
  alg: true,
  status: cast<SigningKeyRecord['status']>(),
  publicJwk: true,
  privateJwkEnc: true,
  createdAt: true,
  retiredAt: true,
  expiresAt: true,
});

export class SigningKeyRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Keys still published: active ones and retired ones whose overlap has not passed. */
  async listPublished(tenantId: string, now: number): Promise<SigningKeyRecord[]> {
    const rows = await this.db
      .selectFrom('signing_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('status', '=', 'active'), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('kid')
      .execute();
    return rows.map(stored.toRecord);
  }

  /**
   * The keys a verifier of this tenant's credentials may need: the published ones, and retired
   * ones that signed credentials not yet expired.
   */
  async listForCredentials(tenantId: string, now: number): Promise<SigningKeyRecord[]> {
    const rows = await this.db
      .selectFrom('signing_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('status', '=', 'active'), eb('expires_at', '>', now), eb('published_until', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('kid')
      .execute();
    return rows.map(stored.toRecord);
  }

  /**
   * Keeps a key in jwt-vc-issuer at least until `until` (a credential it signed expires then). The
   * mark is set a day past the asked time, so issuances within that day write nothing (and take
   * no row lock).
   */
  async publishUntil(kid: string, until: number): Promise<void> {
    await this.db
      .updateTable('signing_keys')
      .set({ published_until: until + PUBLISH_SLACK_MS })
      .where('kid', '=', kid)
      .where((eb) => eb.or([eb('published_until', 'is', null), eb('published_until', '<', until)]))
      .execute();
  }

  /**
   * Stores a new active key unless the tenant already holds an active key of its algorithm: a
   * default key made at first use by instances racing (Keystore.ensureDefaultKeys) is stored once.
   */
  async insertIfNoActive(key: SigningKeyRecord): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtext(${`keyhall.keys:${key.tenantId}`}))`.execute(tx);
      }
      // A write first (it changes nothing) so SQLite takes the write lock at once, as rotate() does.
      const held = await tx
        .updateTable('signing_keys')
        .set({ status: 'active' })
        .where('tenant_id', '=', key.tenantId)
        .where('alg', '=', key.alg)
        .where('status', '=', 'active')
        .returning('kid')
        .execute();
      if (held.length > 0) return;
      await tx
        .insertInto('signing_keys')
        .values(stored.toRow({ ...key, status: 'active', retiredAt: null, expiresAt: null }))
        .execute();
    });
  }

  /**
   * Adds a new active key for an algorithm and retires the previous active ones in one
   * transaction, so readers always see exactly one active key per algorithm. Resolves to the kid
   * of the key it retired (null when the algorithm had no active key), read under the lock so
   * concurrent rotations each name their own predecessor.
   */
  async rotate(key: SigningKeyRecord, overlapMs: number, trx?: Kysely<Database>): Promise<string | null> {
    const run = async (tx: Kysely<Database>) => {
      // Concurrent rotations of one tenant queue here, so exactly one key per algorithm stays active.
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtext(${`keyhall.keys:${key.tenantId}`}))`.execute(tx);
      }
      // RETURNING rather than a prior SELECT: on SQLite the transaction's first statement is then
      // a write, so it takes the write lock at once instead of upgrading a read snapshot.
      const retired = await tx
        .updateTable('signing_keys')
        .set({ status: 'retired', retired_at: key.createdAt, expires_at: key.createdAt + overlapMs })
        .where('tenant_id', '=', key.tenantId)
        .where('alg', '=', key.alg)
        .where('status', '=', 'active')
        .returning(['kid', 'created_at'])
        .execute();
      await tx
        .insertInto('signing_keys')
        .values(stored.toRow({ ...key, status: 'active', retiredAt: null, expiresAt: null }))
        .execute();
      // Exactly one row under the lock; should older data hold several, name the newest.
      retired.sort((a, b) => Number(b.created_at) - Number(a.created_at));
      return retired[0]?.kid ?? null;
    };
    return trx ? run(trx) : this.db.transaction().execute(run);
  }
}
