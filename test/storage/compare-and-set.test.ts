import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RefreshFamily } from '../../src/oauth/types.js';
import { client, openStorage, organization, parallel, type StorageDb, tenant, uid, user } from './helpers.js';

const N = 20;
const NOW = 1_000_000;

describe('storage contract: compare-and-set', () => {
  let s: StorageDb;
  let a: string;
  let b: string;
  let clientId: string;
  before(async () => {
    s = await openStorage();
    a = await tenant(s.r);
    b = await tenant(s.r);
    clientId = (await client(s.r, a)).id;
  });
  after(() => s.close());

  async function family(): Promise<RefreshFamily> {
    const f: RefreshFamily = {
      id: uid('rtf'),
      tenantId: a,
      clientId,
      sub: 'user_1',
      scopes: ['openid', 'offline_access'],
      resources: ['https://api.example'],
      jkt: null,
      extra: { act: { sub: 'svc' } },
      generation: 0,
      createdAt: NOW,
      expiresAt: NOW + 3_600_000,
      revokedAt: null,
    };
    await s.r.refreshTokens.createFamily(f, uid('rt'), NOW + 60_000);
    return f;
  }

  const next = (tokenHash: string) => ({ tokenHash, createdAt: NOW + 1, expiresAt: NOW + 60_000 });

  it('refresh rotate: of 20 parallel rotations from one seen generation exactly one wins', async () => {
    const f = await family();
    const hashes = Array.from({ length: N }, () => uid('rt'));
    const results = await parallel(N, (i) => s.r.refreshTokens.rotate(a, f.id, 0, next(hashes[i] as string)));
    assert.equal(results.filter(Boolean).length, 1);
    const winner = hashes[results.indexOf(true)] as string;
    const presented = await s.r.refreshTokens.find(a, winner);
    assert.equal(presented?.generation, 1);
    assert.equal(presented?.family.generation, 1);
    assert.deepEqual(presented?.family.extra, { act: { sub: 'svc' } });
    const losers = await Promise.all(hashes.filter((h) => h !== winner).map((h) => s.r.refreshTokens.find(a, h)));
    assert.ok(
      losers.every((x) => x === undefined),
      'no loser stored its token',
    );
    assert.equal(await s.r.refreshTokens.rotate(a, f.id, 0, next(uid('rt'))), false, 'the old generation is spent');
    assert.equal(await s.r.refreshTokens.rotate(a, f.id, 1, next(uid('rt'))), true);
  });

  it('refresh rotate: a revoked family or another tenant never moves', async () => {
    const f = await family();
    assert.equal(await s.r.refreshTokens.rotate(b, f.id, 0, next(uid('rt'))), false);
    await s.r.refreshTokens.revokeFamily(a, f.id, NOW);
    const results = await parallel(N, () => s.r.refreshTokens.rotate(a, f.id, 0, next(uid('rt'))));
    assert.equal(results.filter(Boolean).length, 0);
  });

  it('member role: of 20 parallel changes from one seen role exactly one applies', async () => {
    const org = await organization(s.r, a);
    const u = await user(s.r, a);
    await s.r.members.insert({ tenantId: a, organizationId: org.id, userId: u.id, role: 'member', createdAt: 1, updatedAt: 1 });
    const results = await parallel(N, () => s.r.members.setRole(a, org.id, u.id, 'member', 'admin', NOW));
    assert.equal(results.filter((m) => m !== undefined).length, 1);
    assert.equal((await s.r.members.find(a, org.id, u.id))?.role, 'admin');
    assert.equal(await s.r.members.setRole(b, org.id, u.id, 'admin', 'member', NOW), undefined, 'another tenant');
  });
});
