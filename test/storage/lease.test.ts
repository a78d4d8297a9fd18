import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DeliveryRecord } from '../../src/storage/repos/webhook-deliveries.js';
import { sql } from 'kysely';
import { repos } from '../../src/storage/repos/index.js';
import { onPostgres } from '../helpers/db.js';
import { endpoint, openStorage, organization, parallel, type StorageDb, tenant, uid } from './helpers.js';

const NOW = 1_000_000;
const LEASE = 30_000;

describe('storage contract: claiming webhook deliveries with a lease', () => {
  let s: StorageDb;
  let a: string;
  let orgId: string;
  let endpointId: string;
  before(async () => {
    s = await openStorage();
    a = await tenant(s.r);
    orgId = (await organization(s.r, a)).id;
    endpointId = (await endpoint(s.r, a, orgId)).id;
  });
  after(() => s.close());

  async function deliveries(n: number, nextAttemptAt: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const d: DeliveryRecord = {
        id: uid('whd'),
        tenantId: a,
        organizationId: orgId,
        endpointId,
        eventId: uid('evt'),
        eventType: 'organization.updated',
        body: '{}',
        status: 'pending',
        attempts: 0,
        attemptLimit: 5,
        nextAttemptAt,
        leaseOwner: null,
        leaseUntil: null,
        lastStatusCode: null,
        lastError: null,
        createdAt: NOW,
        updatedAt: NOW,
      };
      await s.r.webhookDeliveries.insert(d);
      ids.push(d.id);
    }
    return ids;
  }

  const claim = (owner: string, now: number, limit = 100) =>
    s.r.webhookDeliveries.claim({ owner, now, leaseMs: LEASE, limit, perEndpoint: 100, perOrganization: 100, skipEndpoints: [], skipOrganizations: [] });

  /** Completes every claimed delivery as delivered, so later tests start from an empty backlog. */
  async function finish(owner: string, rows: DeliveryRecord[], now: number) {
    for (const d of rows) {
      const attempt = { id: uid('wha'), deliveryId: d.id, attempt: d.attempts + 1, startedAt: now, durationMs: 5, statusCode: 204, error: null };
      assert.equal(
        await s.r.webhookDeliveries.complete(d, owner, attempt, { status: 'delivered', nextAttemptAt: now, statusCode: 204, error: null }, now),
        true,
      );
    }
  }

  it('concurrent claimers never take the same delivery, and together take all that are due', async () => {
    const ids = await deliveries(24, NOW);
    await deliveries(3, NOW + 60_000); // not due yet
    // Open the pool's connections first, so the claims below really run at once on PostgreSQL.
    await parallel(8, () => sql`select 1`.execute(s.db.kysely));
    const owners = Array.from({ length: 8 }, (_, i) => `disp_${i}`);
    const claimed = await parallel(owners.length, (i) => claim(owners[i] as string, NOW, 5));
    const rest = await claim('disp_rest', NOW);
    const all = [...claimed.flat(), ...rest].map((d) => d.id);
    assert.equal(new Set(all).size, all.length, 'no delivery is claimed twice');
    assert.deepEqual(all.sort(), [...ids].sort(), 'exactly the due deliveries were claimed');
    claimed.forEach((rows, i) => {
      for (const d of rows) assert.deepEqual([d.leaseOwner, d.status, d.leaseUntil], [owners[i], 'delivering', NOW + LEASE]);
    });
    for (const [i, rows] of claimed.entries()) await finish(owners[i] as string, rows, NOW);
    await finish('disp_rest', rest, NOW);
  });

  it(
    'on PostgreSQL a claimer skips the rows another open claim holds instead of waiting for them',
    { skip: !onPostgres && 'SQLite has one writer' },
    async () => {
      const ids = await deliveries(6, NOW);
      const held = await s.db.kysely.transaction().execute(async (trx) => {
        const mine = await repos(trx, s.db.dialect).webhookDeliveries.claim({
          owner: 'disp_x',
          now: NOW,
          leaseMs: LEASE,
          limit: 3,
          perEndpoint: 100,
          perOrganization: 100,
          skipEndpoints: [],
          skipOrganizations: [],
        });
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the second claimer waited for the rows of the first')), 5_000);
        });
        const other = await Promise.race([claim('disp_y', NOW), waited]).finally(() => clearTimeout(timer));
        assert.equal(mine.length, 3);
        assert.deepEqual([...mine, ...other].map((d) => d.id).sort(), [...ids].sort());
        await finish('disp_y', other, NOW);
        return mine;
      });
      await finish('disp_x', held, NOW);
    },
  );

  it('a lease that ran out can be claimed again, and then only its new owner can complete it', async () => {
    const [id] = await deliveries(1, NOW);
    const [first] = await claim('disp_x', NOW);
    assert.equal(first?.id, id);
    assert.deepEqual(await claim('disp_y', NOW + LEASE - 1), [], 'the lease still holds');
    const [again] = await claim('disp_y', NOW + LEASE);
    assert.equal(again?.id, id);
    assert.equal(again?.leaseOwner, 'disp_y');

    const attempt = { id: uid('wha'), deliveryId: id as string, attempt: 1, startedAt: NOW, durationMs: 5, statusCode: 500, error: null };
    const failed = { status: 'pending' as const, nextAttemptAt: NOW + 60_000, statusCode: 500, error: null };
    assert.equal(await s.r.webhookDeliveries.complete(first as DeliveryRecord, 'disp_x', attempt, failed, NOW + LEASE), false, 'the former owner is refused');
    await s.r.webhookDeliveries.release(id as string, 'disp_x', NOW + LEASE);
    assert.equal((await s.r.webhookDeliveries.find(a, endpointId, id as string))?.leaseOwner, 'disp_y', 'nor can it give the delivery back');
    assert.deepEqual(await s.r.webhookDeliveries.attemptsOf([id as string]), [], 'no attempt was recorded for the refused completion');

    assert.equal(await s.r.webhookDeliveries.complete(again as DeliveryRecord, 'disp_y', attempt, failed, NOW + LEASE), true);
    const done = await s.r.webhookDeliveries.find(a, endpointId, id as string);
    assert.deepEqual([done?.status, done?.attempts, done?.leaseOwner, done?.lastStatusCode], ['pending', 1, null, 500]);
    assert.equal((await s.r.webhookDeliveries.attemptsOf([id as string])).length, 1);
    assert.equal(
      await s.r.webhookDeliveries.complete(again as DeliveryRecord, 'disp_y', { ...attempt, id: uid('wha') }, failed, NOW + LEASE),
      false,
      'completing twice is refused',
    );
  });

  it('a released delivery is due again at once', async () => {
    const [id] = await deliveries(1, NOW);
    const [claimed] = await claim('disp_x', NOW + 1);
    assert.equal(claimed?.id, id);
    await s.r.webhookDeliveries.release(id as string, 'disp_x', NOW + 1);
    const [again] = await claim('disp_y', NOW + 1);
    assert.equal(again?.id, id);
    await finish('disp_y', [again as DeliveryRecord], NOW + 1);
  });
});
