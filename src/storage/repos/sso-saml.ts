import type { Kysely } from 'kysely';
import { consumeOnce, deleteExpired, insertOnce, Sweeper } from '../atomic.js';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

export interface SsoSamlRequestRecord {
  requestId: string;
  tenantId: string;
  connectionId: string;
  continuationEnc: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const storedRequest = codec<SsoSamlRequestRecord>()('sso_saml_requests', {
  requestId: true,
  tenantId: true,
  connectionId: true,
  continuationEnc: true,
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

/** Requests expired for an hour are swept every 200 requests sent (of any instance). */
const requestSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_saml_requests', 'expires_at', now - 3600_000));
/** Assertion ids no longer needed (their assertion expired) are swept every 200 sign-ins. */
const assertionSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_saml_assertions', 'expires_at', now));

/**
 * The SAML service provider's one-time records (docs/sso.md): AuthnRequests, each answered at
 * most once (consume-once by update), and the ids of accepted assertions (consume-once by insert).
 * Both hold across instances on one database.
 */
export class SsoSamlRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertRequest(r: SsoSamlRequestRecord): Promise<void> {
    await requestSweeper.tick(this.db, r.createdAt);
    await this.db.insertInto('sso_saml_requests').values(storedRequest.toRow(r)).execute();
  }

  /**
   * The sealed continuation of the live request `requestId` of this connection, or undefined
   * (unknown, another connection's, expired or already used). Reads only: see consumeRequest.
   */
  async liveRequest(tenantId: string, connectionId: string, requestId: string, now: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('sso_saml_requests')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, connection_id: connectionId, request_id: requestId }))
      .executeTakeFirst();
    const request = row && storedRequest.toRecord(row);
    return request && request.consumedAt === null && request.expiresAt > now ? request.continuationEnc : undefined;
  }

  /** Consumes the request, once and before it expires: exactly one caller gets true. */
  consumeRequest(tenantId: string, connectionId: string, requestId: string, now: number): Promise<boolean> {
    const key = { tenant_id: tenantId, connection_id: connectionId, request_id: requestId };
    return consumeOnce(this.db, 'sso_saml_requests', { key, column: 'consumed_at', expiresColumn: 'expires_at', now });
  }

  /** Whether an assertion id of this connection was accepted and has not expired yet. */
  async assertionSeen(connectionId: string, assertionHash: string, now: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('sso_saml_assertions')
      .select('expires_at')
      .where((eb) => eb.and({ connection_id: connectionId, assertion_hash: assertionHash }))
      .executeTakeFirst();
    return row !== undefined && Number(row.expires_at) > now;
  }

  /** Records an accepted assertion id until `expiresAt`. False: it was already used (a replay). */
  async useAssertion(tenantId: string, connectionId: string, assertionHash: string, expiresAt: number, now: number): Promise<boolean> {
    await assertionSweeper.tick(this.db, now);
    return insertOnce(
      this.db,
      'sso_saml_assertions',
      { connection_id: connectionId, assertion_hash: assertionHash, tenant_id: tenantId, expires_at: expiresAt },
      { unique: ['connection_id', 'assertion_hash'], expiresColumn: 'expires_at', now },
    );
  }
}
