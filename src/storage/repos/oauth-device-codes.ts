import type { Kysely } from 'kysely';
import type { DeviceAuthorization, DeviceCodeStore, DeviceDecision, DeviceStatus } from '../../oauth/device/types.js';
import { compareAndSet, consumeOnce, deleteExpired, Sweeper } from '../atomic.js';
import { cast, codec, json, jsonOrNull, num, words } from '../codec.js';
import type { Database } from '../schema.js';

const stored = codec<DeviceAuthorization>()('oauth_device_codes', {
  tenantId: true,
  clientId: true,
  userCodeHash: true,
  scopes: words,
  resources: json<string[]>(),
  createdAt: true,
  expiresAt: true,
  intervalSeconds: num,
  lastPolledAt: true,
  status: cast<DeviceStatus>(),
  userId: true,
  sessionId: true,
  authTime: true,
  amr: jsonOrNull<string[]>(),
  decidedAt: true,
  consumedAt: true,
});

/** Authorizations expired for an hour are swept every 100 requests (of any instance). */
const sweeper = new Sweeper(100, (db, now) => deleteExpired(db, 'oauth_device_codes', 'expires_at', now - 3600_000));

/** The device grant's authorizations (src/oauth/device/types.ts). */
export class OAuthDeviceCodeRepo implements DeviceCodeStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(deviceCodeHash: string, rec: DeviceAuthorization): Promise<void> {
    await sweeper.tick(this.db, rec.createdAt);
    await this.db
      .insertInto('oauth_device_codes')
      .values({ device_code_hash: deviceCodeHash, ...stored.toRow(rec) })
      .execute();
  }

  async find(tenantId: string, deviceCodeHash: string): Promise<DeviceAuthorization | undefined> {
    const row = await this.db
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, device_code_hash: deviceCodeHash }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async findPendingByUserCode(tenantId: string, userCodeHash: string, now: number) {
    const row = await this.db
      .selectFrom('oauth_device_codes')
      .selectAll()
      .where((eb) =>
        eb.and([eb('tenant_id', '=', tenantId), eb('user_code_hash', '=', userCodeHash), eb('status', '=', 'pending'), eb('expires_at', '>', now)]),
      )
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && { deviceCodeHash: row.device_code_hash, rec: stored.toRecord(row) };
  }

  async countUndecided(tenantId: string, clientId: string, since: number): Promise<number> {
    const row = await this.db
      .selectFrom('oauth_device_codes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('client_id', '=', clientId), eb('created_at', '>', since), eb('status', '=', 'pending')]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async polled(tenantId: string, deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void> {
    await this.db
      .updateTable('oauth_device_codes')
      .set({ last_polled_at: now, interval_seconds: intervalSeconds })
      .where((eb) => eb.and({ tenant_id: tenantId, device_code_hash: deviceCodeHash }))
      .execute();
  }

  decide(tenantId: string, deviceCodeHash: string, d: DeviceDecision, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'oauth_device_codes', {
      key: { tenant_id: tenantId, device_code_hash: deviceCodeHash },
      seen: { status: 'pending', decided_at: null },
      set: { status: d.status, user_id: d.userId, session_id: d.sessionId, auth_time: d.authTime, amr: JSON.stringify(d.amr), decided_at: now },
      also: (eb) => eb('expires_at', '>', now),
    });
  }

  consume(tenantId: string, deviceCodeHash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'oauth_device_codes', {
      key: { tenant_id: tenantId, device_code_hash: deviceCodeHash },
      column: 'consumed_at',
      now,
      expiresColumn: 'expires_at',
      also: (eb) => eb('status', '=', 'approved'),
    });
  }
}
