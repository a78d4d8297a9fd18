import type { Kysely } from 'kysely';
import type { SigninFlowRecord, SigninFlowStore, StepName } from '../../signin/flows.js';
import { compareAndSet, deleteExpired, Sweeper } from '../atomic.js';
import { cast, codec } from '../codec.js';
import type { Database } from '../schema.js';

const stored = codec<SigninFlowRecord>()('signin_engine_flows', {
  tenantId: true,
  entry: cast<SigninFlowRecord['entry']>(),
  authorizeFlowHash: true,
  deviceCodeHash: true,
  step: cast<StepName>(),
  version: true,
  createdAt: true,
  expiresAt: true,
  completedAt: true,
});

/** Flows expired for an hour are swept every 200 flows started (of any instance). */
const sweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'signin_engine_flows', 'expires_at', now - 3600_000));

export class SigninEngineFlowRepo implements SigninFlowStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(flowHash: string, flow: SigninFlowRecord): Promise<void> {
    await sweeper.tick(this.db, flow.createdAt);
    await this.db
      .insertInto('signin_engine_flows')
      .values({ flow_hash: flowHash, ...stored.toRow(flow) })
      .execute();
  }

  async find(tenantId: string, flowHash: string): Promise<SigninFlowRecord | undefined> {
    const row = await this.db
      .selectFrom('signin_engine_flows')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, flow_hash: flowHash }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  advance(tenantId: string, flowHash: string, version: number, step: StepName, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'signin_engine_flows', {
      key: { tenant_id: tenantId, flow_hash: flowHash },
      seen: { version, completed_at: null },
      set: { step, version: version + 1 },
      also: (eb) => eb('expires_at', '>', now),
    });
  }

  complete(tenantId: string, flowHash: string, version: number, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'signin_engine_flows', {
      key: { tenant_id: tenantId, flow_hash: flowHash },
      seen: { version, completed_at: null },
      set: { step: 'complete', version: version + 1, completed_at: now },
    });
  }
}
