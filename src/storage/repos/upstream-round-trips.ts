import type { Kysely } from 'kysely';
import { consumeOnce, deleteExpired, Sweeper } from '../atomic.js';
import { cast, codec, jsonOrNull } from '../codec.js';
import type { Database } from '../schema.js';

export type RoundTripPurpose = 'sso' | 'connect' | 'social';

export interface UpstreamRoundTripRecord<Resume = Record<string, unknown>> {
  stateHash: string;
  tenantId: string;
  purpose: RoundTripPurpose;
  upstreamId: string;
  browserHash: string;
  secretsEnc: string;
  resume: Resume | null;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const stored = codec<UpstreamRoundTripRecord>()('upstream_round_trips', {
  stateHash: true,
  tenantId: true,
  purpose: cast<RoundTripPurpose>(),
  upstreamId: true,
  browserHash: true,
  secretsEnc: true,
  resume: jsonOrNull<Record<string, unknown>>(),
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

/** Round trips expired for an hour are swept every 200 started (of any instance). */
const sweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'upstream_round_trips', 'expires_at', now - 3600_000));

/** The one store of upstream round trips: a row per `state`, consumed once by its browser. */
export class UpstreamRoundTripRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert<Resume extends object>(t: UpstreamRoundTripRecord<Resume>): Promise<void> {
    await sweeper.tick(this.db, t.createdAt);
    await this.db
      .insertInto('upstream_round_trips')
      .values(stored.toRow(t as unknown as UpstreamRoundTripRecord))
      .execute();
  }

  /** The round trip of `stateHash` that `purpose` started in this tenant. */
  async find<Resume extends object = Record<string, unknown>>(
    tenantId: string,
    purpose: RoundTripPurpose,
    stateHash: string,
  ): Promise<UpstreamRoundTripRecord<Resume> | undefined> {
    const row = await this.db
      .selectFrom('upstream_round_trips')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, purpose, state_hash: stateHash }))
      .executeTakeFirst();
    return row && (stored.toRecord(row) as unknown as UpstreamRoundTripRecord<Resume>);
  }

  /** Consume-once (compare-and-set on `consumed_at`), only by the browser that started it and before it expires. */
  consume(t: Pick<UpstreamRoundTripRecord, 'tenantId' | 'purpose' | 'stateHash' | 'browserHash'>, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'upstream_round_trips', {
      key: { tenant_id: t.tenantId, purpose: t.purpose, state_hash: t.stateHash, browser_hash: t.browserHash },
      column: 'consumed_at',
      expiresColumn: 'expires_at',
      now,
    });
  }
}
