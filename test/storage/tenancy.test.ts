import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiKey, client, endpoint, openStorage, organization, type StorageDb, tenant, uid, user } from './helpers.js';

/** Pages through `list` with `limit` rows a page; every row of every page. */
async function pages<T extends { id: string }>(list: (after: string | undefined, limit: number) => Promise<T[]>, limit: number): Promise<T[][]> {
  const out: T[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await list(after, limit);
    if (page.length === 0) return out;
    out.push(page);
    after = page[page.length - 1]?.id;
  }
}

describe('storage contract: cursor paging and tenant filtering', () => {
  let s: StorageDb;
  let a: string;
  let b: string;
  before(async () => {
    s = await openStorage();
    a = await tenant(s.r);
    b = await tenant(s.r);
  });
  after(() => s.close());

  it('organizations and users page through 25 rows in id order with no duplicates or gaps', async () => {
    const orgs = Array.from({ length: 25 }, () => uid('org'));
    const users = Array.from({ length: 25 }, () => uid('user'));
    // Inserted in an order that is not the id order, between another tenant's rows.
    for (const i of [...orgs.keys()].reverse()) {
      await organization(s.r, a, { id: orgs[i] });
      await user(s.r, a, { id: users[i] });
      await organization(s.r, b);
      await user(s.r, b);
    }
    const orgPages = await pages((after, limit) => s.r.organizations.list(a, after, limit), 10);
    assert.deepEqual(
      orgPages.map((p) => p.length),
      [10, 10, 5],
    );
    assert.deepEqual(
      orgPages.flat().map((o) => o.id),
      [...orgs].sort(),
    );
    const userPages = await pages((after, limit) => s.r.users.list(a, after, limit), 7);
    assert.deepEqual(
      userPages.map((p) => p.length),
      [7, 7, 7, 4],
    );
    assert.deepEqual(
      userPages.flat().map((u) => u.id),
      [...users].sort(),
    );
    assert.deepEqual((await s.r.users.list(a, undefined, 100, 'nobody@example.com')).length, 0);
    const one = await s.r.users.find(a, users[3] as string);
    assert.deepEqual(
      (await s.r.users.list(a, undefined, 100, one?.email)).map((u) => u.id),
      [users[3]],
    );
  });

  it("organizations: another tenant's id finds, lists, updates and deletes nothing", async () => {
    const o = await organization(s.r, a, { name: 'Mine' });
    assert.equal(await s.r.organizations.find(b, o.id), undefined);
    assert.equal(await s.r.organizations.findShared(b, o.id, s.db.dialect), undefined);
    assert.ok(!(await s.r.organizations.list(b, undefined, 1000)).some((x) => x.id === o.id));
    assert.equal(await s.r.organizations.update(b, o.id, { name: 'Stolen' }, 9), undefined);
    assert.equal(await s.r.organizations.delete(b, o.id), false);
    assert.deepEqual(await s.r.organizations.find(a, o.id), o, 'unchanged');
  });

  it("users: another tenant's id finds, lists, updates and deletes nothing", async () => {
    const u = await user(s.r, a, { name: 'Mine' });
    assert.equal(await s.r.users.find(b, u.id), undefined);
    assert.equal(await s.r.users.findByEmail(b, u.email), undefined);
    assert.deepEqual(await s.r.users.list(b, undefined, 1000, u.email), []);
    assert.equal(await s.r.users.update(b, u.id, { name: 'Stolen', passwordHash: 'x' }, 9), undefined);
    assert.equal(await s.r.users.delete(b, u.id), false);
    assert.deepEqual(await s.r.users.find(a, u.id), u, 'unchanged');
  });

  it("members: another tenant's id finds, lists, changes and removes nothing", async () => {
    const o = await organization(s.r, a);
    const u = await user(s.r, a);
    const m = { tenantId: a, organizationId: o.id, userId: u.id, role: 'member', roles: ['member'], createdAt: 1, updatedAt: 1 };
    await s.r.members.insert(m);
    assert.equal(await s.r.members.find(b, o.id, u.id), undefined);
    assert.deepEqual(await s.r.members.list(b, o.id, undefined, 100), []);
    assert.deepEqual(await s.r.members.listByUser(b, u.id), []);
    assert.deepEqual(await s.r.members.listByOrganization(b, o.id), []);
    assert.equal(await s.r.members.setRole(b, o.id, u.id, 'member', 'admin', 9), undefined);
    assert.equal(await s.r.members.delete(b, o.id, u.id), undefined);
    assert.deepEqual(await s.r.members.find(a, o.id, u.id), m, 'unchanged');
    assert.deepEqual(
      (await s.r.members.list(a, o.id, undefined, 100)).map((x) => [x.userId, x.email]),
      [[u.id, u.email]],
    );
  });

  it("API keys: another tenant's id finds, lists and revokes nothing", async () => {
    const o = await organization(s.r, a);
    const orgKey = await apiKey(s.r, a, o.id);
    const platformKey = await apiKey(s.r, a, null);
    assert.equal(await s.r.apiKeys.findByHash(b, orgKey.keyHash), undefined);
    assert.deepEqual(await s.r.apiKeys.list(b, o.id, undefined, 100), []);
    assert.ok(!(await s.r.apiKeys.list(b, null, undefined, 100)).some((k) => k.id === platformKey.id));
    assert.equal(await s.r.apiKeys.revoke(b, o.id, orgKey.id, 9), undefined);
    assert.equal(await s.r.apiKeys.revoke(b, null, platformKey.id, 9), undefined);
    await s.r.apiKeys.revokeAllOfOrganization(b, o.id, 9);
    assert.deepEqual(await s.r.apiKeys.findByHash(a, orgKey.keyHash), orgKey, 'unchanged');
    assert.deepEqual(await s.r.apiKeys.findByHash(a, platformKey.keyHash), platformKey, 'unchanged');
    assert.equal(await s.r.apiKeys.revoke(a, null, orgKey.id, 9), undefined, 'an organization key is not a platform key');
  });

  it("webhook endpoints: another tenant's id finds, lists and deletes nothing", async () => {
    const o = await organization(s.r, a);
    const e = await endpoint(s.r, a, o.id);
    assert.equal(await s.r.webhookEndpoints.find(b, o.id, e.id), undefined);
    assert.deepEqual(await s.r.webhookEndpoints.listByOrganization(b, o.id, s.db.dialect), []);
    assert.equal(await s.r.webhookEndpoints.delete(b, o.id, e.id), false);
    assert.deepEqual(await s.r.webhookEndpoints.find(a, o.id, e.id), e, 'unchanged');
  });

  it("OAuth clients: another tenant's id finds, lists, updates and deletes nothing", async () => {
    const c = await client(s.r, a, { clientName: 'Mine' });
    assert.equal(await s.r.oauthClients.find(b, c.id), undefined);
    assert.ok(!(await s.r.oauthClients.list(b, { limit: 1000 })).some((x) => x.id === c.id));
    assert.equal(await s.r.oauthClients.update({ ...c, tenantId: b, clientName: 'Stolen' }), false);
    assert.equal(await s.r.oauthClients.delete(b, c.id), false);
    assert.deepEqual(await s.r.oauthClients.find(a, c.id), c, 'unchanged');
  });

  it("sessions: another tenant's id finds, lists, touches and revokes nothing", async () => {
    const u = await user(s.r, a);
    const ses = {
      id: uid('ses'),
      tenantId: a,
      userId: u.id,
      userAgent: 'ua',
      ip: '192.0.2.1',
      authTime: 1,
      createdAt: 1,
      lastSeenAt: 1,
      idleExpiresAt: 10_000,
      expiresAt: 20_000,
      revokedAt: null,
      amr: ['pwd'],
      mfaPending: false,
      // The organization it last signed in to (issue 31) and the social connection of its first factor (issue 30).
      organizationId: null,
      idp: undefined,
      // How its first factor was given (migration 0042): none for this fixture.
      method: undefined,
    };
    const token = uid('tok');
    await s.r.sessions.insert(ses, token);
    assert.equal(await s.r.sessions.find(b, ses.id), undefined);
    assert.equal(await s.r.sessions.findByToken(b, token), undefined);
    assert.deepEqual(await s.r.sessions.listActive(b, u.id, 5), []);
    await s.r.sessions.touch(b, ses.id, 5, 99_999);
    assert.deepEqual(await s.r.sessions.revoke(b, u.id, ses.id, 5), []);
    assert.deepEqual(await s.r.sessions.revokeAllForUser(b, u.id, 5), []);
    assert.deepEqual(await s.r.sessions.findByToken(a, token), ses, 'unchanged');
    assert.deepEqual(
      (await s.r.sessions.listActive(a, u.id, 5)).map((x) => x.id),
      [ses.id],
    );
  });
});
