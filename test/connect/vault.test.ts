import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { expectError, v1 } from '../helpers/v1.js';
import { startVaultBed, type VaultBed } from './helpers.js';

describe('connected-accounts vault end to end (upstream: a second Keyhall tenant)', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  before(async () => {
    bed = await startVaultBed({ clock });
  });
  after(() => bed.s.close());

  const token = (accountId: string, key = bed.s.tenant.platformApiKey) => v1(bed.s, key)('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);

  it('connects, returns the live token, refreshes near expiry with rotation, and audits every retrieval', async () => {
    const u = await bed.createUserPair('ada');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    assert.equal(await bed.upstreamRefreshCount(), 1);

    const first = await token(accountId);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['cache-control'], 'no-store');
    const t1 = first.json();
    assert.deepEqual(Object.keys(t1).sort(), ['access_token', 'expires_at', 'scopes']);
    assert.ok(t1.scopes.includes('offline_access'));
    // The token is the upstream's, for this user.
    const introspected = await bed.s.request({
      method: 'POST',
      host: bed.upstreamHost,
      path: '/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${bed.upstreamClient.client_id}:${bed.upstreamClient.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: t1.access_token }).toString(),
    });
    assert.equal(introspected.json().active, true, introspected.text);

    // Still fresh: the same token, no upstream request.
    clock.advance(60_000);
    assert.equal((await token(accountId)).json().access_token, t1.access_token);
    assert.equal(await bed.upstreamRefreshCount(), 1);

    // Within the skew of expiry: refreshed once upstream (the refresh token rotated).
    clock.advance(500_000);
    const second = await token(accountId);
    assert.equal(second.status, 200, second.text);
    const t2 = second.json();
    assert.notEqual(t2.access_token, t1.access_token);
    assert.ok(t2.expires_at > t1.expires_at);
    assert.equal(await bed.upstreamRefreshCount(), 2);
    const row = await bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    assert.equal(Number(row.version), 2);
    assert.notEqual(row.last_refreshed_at, null);

    // Every retrieval in /v1/events with its caller, never the token.
    const events = (await bed.api('GET', `/events?types=connected_account.token_retrieved,connected_account.connected&organization_id=${bed.orgId}&limit=100`)).json().data;
    const mine = events.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);
    assert.deepEqual(mine.map((e: { type: string }) => e.type), ['connected_account.connected', 'connected_account.token_retrieved', 'connected_account.token_retrieved', 'connected_account.token_retrieved']);
    assert.deepEqual(mine.slice(1).map((e: { data: { refreshed: boolean } }) => e.data.refreshed), [false, false, true]);
    const keyId = (await bed.api('GET', '/api_keys')).json().data[0].id;
    for (const e of mine.slice(1)) {
      assert.deepEqual(e.actor, { type: 'api_key', id: keyId });
      assert.deepEqual(e.data.caller, { type: 'api_key', api_key_id: keyId });
    }
    assert.ok(!JSON.stringify(events).includes(t1.access_token));
    assert.ok(!JSON.stringify(events).includes(t2.access_token));

    // Nothing in the database in plaintext.
    const raw = JSON.stringify(await bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().execute());
    assert.ok(!raw.includes(t1.access_token) && !raw.includes(t2.access_token));
    assert.ok(!raw.includes(t2.access_token.split('.')[1]!), 'not even the JWT payload');
  });
});
