import type { Kysely } from 'kysely';
import { compareAndSetRow, consumeOnce, deleteExpired, insertOnce, Sweeper } from '../atomic.js';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

export interface SsoSamlRequestRecord {
  requestId: string;
  tenantId: string;
  connectionId: string;
  /** SHA-256 hex of the browser-binding cookie of the browser that sent the request. */
  browserHash: string;
  continuationEnc: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

/** A validated response waiting for the browser of the request it answered. */
export interface SsoSamlOutcomeRecord {
  handleHash: string;
  tenantId: string;
  connectionId: string;
  browserHash: string;
  outcomeEnc: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const storedRequest = codec<SsoSamlRequestRecord>()('sso_saml_requests', {
  requestId: true,
  tenantId: true,
  connectionId: true,
  browserHash: true,
  continuationEnc: true,
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

const storedOutcome = codec<SsoSamlOutcomeRecord>()('sso_saml_outcomes', {
  handleHash: true,
  tenantId: true,
  connectionId: true,
  browserHash: true,
  outcomeEnc: true,
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

/** Requests expired for an hour are swept every 200 requests sent (of any instance). */
const requestSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_saml_requests', 'expires_at', now - 3600_000));
/** Assertion ids no longer needed (their assertion expired) are swept every 200 sign-ins. */
const assertionSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_saml_assertions', 'expires_at', now));
/** Outcomes past their expiry (used or not) are swept every 200 kept. */
const outcomeSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_saml_outcomes', 'expires_at', now));

/**
 * The SAML service provider's one-time records (docs/sso.md): AuthnRequests, each answered at
 * most once (consume-once by update), the ids of accepted assertions (consume-once by insert),
 * and validated outcomes, each completed at most once (consume-once by update). All hold across
 * instances on one database.
 */
export class SsoSamlRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertRequest(r: SsoSamlRequestRecord): Promise<void> {
    await requestSweeper.tick(this.db, r.createdAt);
    await this.db.insertInto('sso_saml_requests').values(storedRequest.toRow(r)).execute();
  }

  /** Whether `requestId` is a live request of this connection (unexpired, unused). Reads only: see consumeRequest. */
  async liveRequest(tenantId: string, connectionId: string, requestId: string, now: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('sso_saml_requests')
      .select(['expires_at', 'consumed_at'])
      .where((eb) => eb.and({ tenant_id: tenantId, connection_id: connectionId, request_id: requestId }))
      .executeTakeFirst();
    return row !== undefined && row.consumed_at === null && Number(row.expires_at) > now;
  }

  /** Consumes the request, once and before it expires: exactly one caller gets it (the row), the others undefined. */
  async consumeRequest(tenantId: string, connectionId: string, requestId: string, now: number): Promise<SsoSamlRequestRecord | undefined> {
    const row = await compareAndSetRow(this.db, 'sso_saml_requests', {
      key: { tenant_id: tenantId, connection_id: connectionId, request_id: requestId },
      seen: { consumed_at: null },
      set: { consumed_at: now },
      also: (eb) => eb('expires_at', '>', now),
    });
    return row && storedRequest.toRecord(row);
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

  async insertOutcome(o: SsoSamlOutcomeRecord): Promise<void> {
    await outcomeSweeper.tick(this.db, o.createdAt);
    await this.db.insertInto('sso_saml_outcomes').values(storedOutcome.toRow(o)).execute();
  }

  async findOutcome(tenantId: string, handleHash: string): Promise<SsoSamlOutcomeRecord | undefined> {
    const row = await this.db
      .selectFrom('sso_saml_outcomes')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, handle_hash: handleHash }))
      .executeTakeFirst();
    return row && storedOutcome.toRecord(row);
  }

  /** Consume-once, only by the browser of the answered request and before it expires. */
  consumeOutcome(tenantId: string, handleHash: string, browserHash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'sso_saml_outcomes', {
      key: { tenant_id: tenantId, handle_hash: handleHash, browser_hash: browserHash },
      column: 'consumed_at',
      expiresColumn: 'expires_at',
      now,
    });
  }

  /** Uses the outcome up without completing it (another browser presented its handle). */
  async burnOutcome(tenantId: string, handleHash: string, now: number): Promise<void> {
    await consumeOnce(this.db, 'sso_saml_outcomes', { key: { tenant_id: tenantId, handle_hash: handleHash }, column: 'consumed_at', now });
  }
}
