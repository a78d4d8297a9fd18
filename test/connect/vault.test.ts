import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { openToken } from '../../src/connect/secrets.js';
import { expectError, v1 } from '../helpers/v1.js';
import { Browser, signIn } from '../signin/helpers.js';
import { startVaultBed, type VaultBed } from './helpers.js';

describe('connected-accounts vault end to end (upstream: a second Keyhall tenant)', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  before(async () => {
    bed = await startVaultBed({ clock });
  });
  after(() => bed.s.close());

  const token = (accountId: string, key = bed.s.tenant.platformApiKey) =>
    v1(bed.s, key)('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);

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
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${bed.upstreamClient.client_id}:${bed.upstreamClient.client_secret}`).toString('base64')}`,
      },
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
    const events = (
      await bed.api('GET', `/events?types=connected_account.token_retrieved,connected_account.connected&organization_id=${bed.orgId}&limit=100`)
    ).json().data;
    const mine = events.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);
    assert.deepEqual(
      mine.map((e: { type: string }) => e.type),
      ['connected_account.connected', 'connected_account.token_retrieved', 'connected_account.token_retrieved', 'connected_account.token_retrieved'],
    );
    assert.deepEqual(
      mine.slice(1).map((e: { data: { refreshed: boolean } }) => e.data.refreshed),
      [false, false, true],
    );
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

  const raw = (accountId: string) =>
    bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
  const failures = async (accountId: string) =>
    (await bed.api('GET', `/events?types=connected_account.token_retrieval_failed,connected_account.reauthorization_required&limit=100`))
      .json()
      .data.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);
  const upstreamToken = (form: Record<string, string>) =>
    bed.s.request({
      method: 'POST',
      host: bed.upstreamHost,
      path: '/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${bed.upstreamClient.client_id}:${bed.upstreamClient.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams(form).toString(),
    });

  it("answers 404 account_not_found for unknown ids and for another organization's account, and audits the attempt", async () => {
    const u = await bed.createUserPair('grace');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    for (const id of ['acct_00000000000000000000000000', 'nope', 'x'.repeat(64)]) expectError(await token(id), 404, 'account_not_found');
    const other = (await bed.api('POST', '/organizations', { name: 'Other' })).json().id as string;
    expectError(await bed.api('POST', `/organizations/${other}/connect/accounts/${accountId}/token`), 404, 'account_not_found');
    expectError(await bed.api('GET', `/organizations/${other}/connect/accounts/${accountId}`), 404, 'account_not_found');
    expectError(await bed.api('DELETE', `/organizations/${other}/connect/accounts/${accountId}`), 404, 'account_not_found');
    const failed = (await bed.api('GET', `/events?types=connected_account.token_retrieval_failed&organization_id=${other}`)).json().data;
    assert.equal(failed.length, 1);
    assert.equal(failed[0].data.reason, 'account_not_found');
    // An org-bound key only for its own organization; the permission is needed.
    const otherKey = (await bed.api('POST', `/organizations/${other}/api_keys`, { name: 'o', scopes: ['connected_accounts:token'] })).json().key;
    expectError(await token(accountId, otherKey), 403, 'forbidden');
    const readKey = (await bed.api('POST', `/organizations/${bed.orgId}/api_keys`, { name: 'r', scopes: ['connected_accounts:read'] })).json().key;
    expectError(await token(accountId, readKey), 403, 'insufficient_scope');
    const ownKey = (await bed.api('POST', `/organizations/${bed.orgId}/api_keys`, { name: 't', scopes: ['connected_accounts:token'] })).json().key;
    assert.equal((await token(accountId, ownKey)).status, 200);
  });

  it('lists and reads accounts for administrators, never with a token', async () => {
    const u = await bed.createUserPair('alan');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const secret = (await token(accountId)).json().access_token as string;
    const list = await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts?user_id=${u.userId}`);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json().data.length, 1);
    const a = list.json().data[0];
    assert.equal(a.account_id, accountId);
    assert.equal(a.user_id, u.userId);
    assert.equal(a.provider_id, bed.providerId);
    assert.equal(a.status, 'active');
    assert.equal(typeof a.subject, 'string');
    assert.ok(!('access_token' in a) && !('refresh_token' in a));
    assert.ok(!list.text.includes(secret));
    assert.equal((await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts?provider_id=${bed.providerId}&limit=100`)).json().data.length >= 1, true);
    assert.equal((await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts?user_id=${u.userId}&status=needs_reauthorization`)).json().data.length, 0);
    expectError(await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts?status=broken`), 400, 'invalid_request');
    const one = await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts/${accountId}`);
    assert.equal(one.status, 200);
    assert.ok(!one.text.includes(secret));
  });

  it('upstream reuse detection: a refused refresh (invalid_grant) is 502 upstream_refresh_failed and marks the account; connecting again restores it', async () => {
    const u = await bed.createUserPair('edsger');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const stale = (await raw(accountId)).refresh_token_enc;
    clock.advance(570_000);
    assert.equal((await token(accountId)).status, 200);
    // A stale copy of the rotated refresh token: the upstream sees a reuse and revokes the family.
    await bed.s.server.ctx.db.kysely
      .updateTable('connected_accounts')
      .set({ refresh_token_enc: stale, expires_at: clock.now() })
      .where('id', '=', accountId)
      .execute();
    const refused = await token(accountId);
    expectError(refused, 502, 'upstream_refresh_failed');
    assert.equal((await raw(accountId)).status, 'needs_reauthorization');
    const count = await bed.upstreamRefreshCount();
    expectError(await token(accountId), 502, 'upstream_refresh_failed');
    assert.equal(await bed.upstreamRefreshCount(), count, 'a marked account does not call the upstream');
    const events = await failures(accountId);
    assert.deepEqual(
      events.map((e: { type: string; data: { reason: string } }) => `${e.type}:${e.data.reason}`),
      [
        'connected_account.reauthorization_required:invalid_grant',
        'connected_account.token_retrieval_failed:invalid_grant',
        'connected_account.token_retrieval_failed:needs_reauthorization',
      ],
    );
    assert.equal((await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts?status=needs_reauthorization&user_id=${u.userId}`)).json().data.length, 1);
    assert.equal(await bed.connect(u.email, u.upstreamEmail), accountId, 'connecting again updates the same account');
    assert.equal((await raw(accountId)).status, 'active');
    assert.equal((await token(accountId)).status, 200);
  });

  it('removal by an administrator revokes the tokens upstream (RFC 7009); a provider in use cannot be removed', async () => {
    const u = await bed.createUserPair('barbara');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const row = await raw(accountId);
    const refreshToken = openToken(bed.s.server.ctx.envelope, row.tenant_id, accountId, 'refresh', row.refresh_token_enc!);
    expectError(await bed.api('DELETE', `/connect/providers/${bed.providerId}`), 409, 'conflict');
    assert.equal((await bed.api('DELETE', `/organizations/${bed.orgId}/connect/accounts/${accountId}`)).status, 204);
    expectError(await bed.api('GET', `/organizations/${bed.orgId}/connect/accounts/${accountId}`), 404, 'account_not_found');
    expectError(await token(accountId), 404, 'account_not_found');
    expectError(await upstreamToken({ grant_type: 'refresh_token', refresh_token: refreshToken }), 400, 'invalid_grant');
    const e = (await bed.api('GET', `/events?types=connected_account.disconnected&limit=100`))
      .json()
      .data.find((x: { data: { account_id: string } }) => x.data.account_id === accountId);
    assert.equal(e.actor.type, 'api_key');
    assert.equal(e.data.upstream_revocation, 'attempted');
  });

  it("/connect lists the user's accounts and lets them disconnect one", async () => {
    const u = await bed.createUserPair('margaret');
    const b = new Browser(bed.s.port, bed.s.tenant.tenant.host);
    const accountId = await bed.connect(u.email, u.upstreamEmail, b);
    const page = await b.get('/connect');
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`data-account="${accountId}" data-status="active"`));
    assert.match(page.text, new RegExp(`data-provider="${bed.providerId}"`));
    assert.ok(!page.text.includes((await token(accountId)).json().access_token));
    // Another user's account cannot be disconnected from this session.
    const other = await bed.createUserPair('mary');
    const otherAccount = await bed.connect(other.email, other.upstreamEmail);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const refused = await b.post('/connect/accounts/disconnect', { csrf_token: csrf, account_id: otherAccount });
    assert.equal(refused.status, 404);
    assert.equal((await token(otherAccount)).status, 200);
    const done = await b.submit(page, {}, 0);
    assert.equal(done.status, 303);
    assert.equal(done.headers.location, '/connect');
    expectError(await token(accountId), 404, 'account_not_found');
    const e = (await bed.api('GET', `/events?types=connected_account.disconnected&limit=100`))
      .json()
      .data.find((x: { data: { account_id: string } }) => x.data.account_id === accountId);
    assert.deepEqual(e.actor, { type: 'user', id: u.userId });
    // Without a session: to the login page, back to /connect after.
    const anonymous = new Browser(bed.s.port, bed.s.tenant.tenant.host);
    const r = await anonymous.get('/connect');
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/login?return_to=%2Fconnect');
    assert.equal((await signIn(anonymous, r.headers.location as string, u.email)).headers.location, '/connect');
  });

  it('an unreachable upstream is 502 upstream_refresh_failed and leaves the account active', async () => {
    const u = await bed.createUserPair('dennis');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const p = (await bed.api('GET', `/connect/providers/${bed.providerId}`)).json();
    const moved = await bed.api('PATCH', `/connect/providers/${bed.providerId}`, {
      type: 'oauth2',
      issuer: p.issuer,
      authorization_endpoint: p.authorization_endpoint,
      token_endpoint: 'http://127.0.0.1:1/token',
    });
    assert.equal(moved.status, 200, moved.text);
    try {
      clock.advance(570_000);
      expectError(await token(accountId), 502, 'upstream_refresh_failed');
      const row = await raw(accountId);
      assert.equal(row.status, 'active');
      assert.equal(row.refresh_owner, null, 'the claim was released');
      const events = await failures(accountId);
      assert.equal(events.at(-1).data.reason, 'upstream_unreachable');
    } finally {
      assert.equal((await bed.api('PATCH', `/connect/providers/${bed.providerId}`, { type: 'oidc', issuer: p.issuer })).status, 200);
    }
    assert.equal((await token(accountId)).status, 200, 'refreshed once the upstream is back');
  });

  it('audits a retrieval made for an OAuth client (the /mcp path) with the client, the user and the act chain', async () => {
    const u = await bed.createUserPair('ken');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const act = { sub: 'agent-7', act: { sub: 'orchestrator' } };
    const t = await bed.s.server.ctx.management.vault.retrieve(bed.s.tenant.tenant.id, bed.orgId, accountId, {
      type: 'oauth_client',
      clientId: 'cli_agent',
      userId: u.userId,
      act,
    });
    assert.ok(t.accessToken.length > 0);
    const e = (await bed.api('GET', `/events?types=connected_account.token_retrieved&limit=100`))
      .json()
      .data.filter((x: { data: { account_id: string } }) => x.data.account_id === accountId)[0];
    assert.deepEqual(e.actor, { type: 'oauth_client', id: 'cli_agent' });
    assert.deepEqual(e.data.caller, { type: 'oauth_client', client_id: 'cli_agent', user_id: u.userId, act });
  });
});
