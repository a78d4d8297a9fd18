import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { openToken } from '../../src/connect/secrets.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { expectError, v1 } from '../helpers/v1.js';
import { createDirectory, type Directory, PATCH, USER } from '../scim/helpers.js';
import { startVaultBed, type VaultBed } from './helpers.js';

// Issue 26, finding 3: after `DELETE …/members/{user}` the organization's key still retrieved
// (and refreshed) the former member's upstream tokens. Membership now ends vault access, whatever
// ends it: the API, SCIM deactivation or deletion, the user's deletion.
describe('membership ends vault access', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  let orgKey: string;
  let directory: Directory;
  const logs: string[] = [];
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    bed = await startVaultBed({ clock, logStream, config: { logLevel: 'warn' } });
    // The organization's own key: it removes members and retrieves tokens.
    const key = await bed.api('POST', `/organizations/${bed.orgId}/api_keys`, {
      name: 'org',
      scopes: ['members:write', 'connected_accounts:token', 'connected_accounts:read'],
    });
    assert.equal(key.status, 201, key.text);
    orgKey = key.json().key;
    // The directory links the bed's users, whose emails are in the organization's verified domain.
    assert.equal((await bed.api('PATCH', `/organizations/${bed.orgId}`, { domain: 'acme.example' })).status, 200);
    assert.equal((await bed.api('POST', `/organizations/${bed.orgId}/domain_verification`, { method: 'manual' })).status, 200);
    directory = await createDirectory(bed.s, { orgId: bed.orgId });
  });
  after(() => bed.s.close());

  const org = () => v1(bed.s, orgKey);
  const token = (accountId: string) => org()('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);
  const upstreamRefreshToken = async (accountId: string) => {
    const row = await bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    return openToken(bed.s.server.ctx.envelope, row.tenant_id, accountId, 'refresh', row.refresh_token_enc!);
  };
  /** The refresh grant at the upstream itself, as the vault would send it. */
  const upstreamRefresh = (refreshToken: string) =>
    bed.s.request({
      method: 'POST',
      host: bed.upstreamHost,
      path: '/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${bed.upstreamClient.client_id}:${bed.upstreamClient.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    });
  const disconnected = async (accountId: string) =>
    (await bed.api('GET', `/events?types=connected_account.disconnected&organization_id=${bed.orgId}&limit=100`))
      .json()
      .data.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);

  /** A member with a connected account that the organization's key can retrieve; its upstream refresh token. */
  async function connected(name: string) {
    const u = await bed.createUserPair(name);
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    assert.equal((await token(accountId)).status, 200);
    return { ...u, accountId, refreshToken: await upstreamRefreshToken(accountId) };
  }

  /** Neither retrieval nor a refresh (the token near expiry) serves the account; the upstream tokens are revoked. */
  async function refused(a: { accountId: string; refreshToken: string }) {
    expectError(await token(a.accountId), 404, 'account_not_found');
    const minted = await bed.upstreamRefreshCount();
    clock.advance(3_600_000);
    expectError(await token(a.accountId), 404, 'account_not_found');
    assert.equal(await bed.upstreamRefreshCount(), minted, 'nothing refreshed upstream');
    expectError(await org()('GET', `/organizations/${bed.orgId}/connect/accounts/${a.accountId}`), 404, 'account_not_found');
    expectError(await upstreamRefresh(a.refreshToken), 400, 'invalid_grant');
  }

  it('DELETE …/members/{user} with the organization key: 404 account_not_found, revoked upstream, audited', async () => {
    const a = await connected('api-leaver');
    assert.equal((await org()('DELETE', `/organizations/${bed.orgId}/members/${a.userId}`)).status, 204);
    await refused(a);
    const [e, ...more] = await disconnected(a.accountId);
    assert.equal(more.length, 0);
    assert.equal(e.actor.type, 'api_key');
    assert.deepEqual(e.data, {
      account_id: a.accountId,
      provider_id: bed.providerId,
      user_id: a.userId,
      reason: 'membership_ended',
      upstream_revocation: 'attempted',
    });
    // The retrieval attempts after the removal are audited too.
    const failed = (await bed.api('GET', `/events?types=connected_account.token_retrieval_failed&organization_id=${bed.orgId}&limit=100`)).json().data;
    assert.ok(failed.some((f: { data: { account_id: string; reason: string } }) => f.data.account_id === a.accountId && f.data.reason === 'account_not_found'));
  });

  it('SCIM deactivation (active: false): the same', async () => {
    const a = await connected('scim-deactivated');
    const linked = await directory.scim('POST', '/Users', { schemas: [USER], userName: a.email });
    assert.equal(linked.status, 201, linked.text);
    const off = await directory.scim('PATCH', `/Users/${linked.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    assert.equal(off.status, 200, off.text);
    await refused(a);
    const [e] = await disconnected(a.accountId);
    assert.deepEqual(e.actor, { type: 'scim', id: directory.connectionId });
    assert.equal(e.data.reason, 'membership_ended');
    // Reactivation makes them a member again, but the account stays disconnected.
    const on = await directory.scim('PATCH', `/Users/${linked.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    assert.equal(on.status, 200, on.text);
    expectError(await token(a.accountId), 404, 'account_not_found');
  });

  it('SCIM DELETE: the same', async () => {
    const a = await connected('scim-deleted');
    const linked = await directory.scim('POST', '/Users', { schemas: [USER], userName: a.email });
    assert.equal(linked.status, 201, linked.text);
    assert.equal((await directory.scim('DELETE', `/Users/${linked.json().id}`)).status, 204);
    await refused(a);
    const [e] = await disconnected(a.accountId);
    assert.deepEqual(e.actor, { type: 'scim', id: directory.connectionId });
    assert.equal(e.data.reason, 'membership_ended');
  });

  it("the user's deletion: the account is disconnected with its event and revoked upstream", async () => {
    const a = await connected('deleted-user');
    assert.equal((await bed.api('DELETE', `/users/${a.userId}`)).status, 204);
    await refused(a);
    const [e] = await disconnected(a.accountId);
    assert.equal(e.data.reason, 'membership_ended');
  });

  it('an account left behind by an earlier removal is not served either: retrieval checks membership every time', async () => {
    const a = await connected('left-behind');
    // Removed before this fix, which left the account in place: only the membership row goes.
    await bed.s.server.ctx.db.kysely.deleteFrom('members').where('user_id', '=', a.userId).execute();
    expectError(await token(a.accountId), 404, 'account_not_found');
    clock.advance(3_600_000);
    const minted = await bed.upstreamRefreshCount();
    expectError(await token(a.accountId), 404, 'account_not_found');
    assert.equal(await bed.upstreamRefreshCount(), minted, 'nothing refreshed upstream');
    const failed = (await bed.api('GET', `/events?types=connected_account.token_retrieval_failed&organization_id=${bed.orgId}&limit=100`)).json().data;
    assert.ok(failed.some((f: { data: { account_id: string; reason: string } }) => f.data.account_id === a.accountId && f.data.reason === 'not_a_member'));
    // An administrator can still remove it, which revokes it upstream.
    assert.equal((await bed.api('DELETE', `/organizations/${bed.orgId}/connect/accounts/${a.accountId}`)).status, 204);
    expectError(await upstreamRefresh(a.refreshToken), 400, 'invalid_grant');
  });

  it('a failed upstream revocation does not keep the account (it is logged)', async () => {
    const a = await connected('revoke-fails');
    // The upstream client's credentials no longer work: its revocation endpoint refuses Keyhall.
    assert.equal((await bed.api('PATCH', `/connect/providers/${bed.providerId}`, { client_secret: 'wrong' })).status, 200);
    try {
      assert.equal((await org()('DELETE', `/organizations/${bed.orgId}/members/${a.userId}`)).status, 204);
      expectError(await token(a.accountId), 404, 'account_not_found');
      assert.equal((await disconnected(a.accountId))[0].data.reason, 'membership_ended');
      const logged = () =>
        logs
          .join('')
          .split('\n')
          .filter((l) => l.includes('upstream token revocation failed') && l.includes(a.accountId));
      for (let i = 0; i < 50 && logged().length === 0; i++) await sleep(40);
      assert.equal(logged().length, 2, 'the refresh token and the access token');
      assert.ok(!logs.join('').includes(a.refreshToken), 'never the token');
    } finally {
      await bed.api('PATCH', `/connect/providers/${bed.providerId}`, { client_secret: bed.upstreamClient.client_secret });
    }
  });

  // Last: it deletes the bed's organization.
  it("the organization's deletion: every member's accounts are disconnected with their events and revoked upstream", async () => {
    const a = await connected('org-deleted');
    assert.equal((await bed.api('DELETE', `/organizations/${bed.orgId}`)).status, 204);
    const [e, ...more] = await disconnected(a.accountId);
    assert.equal(more.length, 0);
    assert.equal(e.data.reason, 'membership_ended');
    expectError(await upstreamRefresh(a.refreshToken), 400, 'invalid_grant');
  });
});

describe('a membership ending during a refresh', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  let proxy: http.Server;
  /** The upstream's answer to the vault's refresh, held until released. */
  let held: { release: () => void } | undefined;
  let upstreamAnswer: { refresh_token?: string } = {};
  /** What the proxy holds: nothing (connecting), the request itself (the upstream has not seen it) or only the answer. */
  let hold: 'nothing' | 'request' | 'answer' = 'nothing';
  before(async () => {
    bed = await startVaultBed({ clock });
    // The provider's token endpoint: a proxy to the upstream's that holds each answer until released
    // (the upstream has refreshed and rotated; the vault has not heard back yet).
    proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const forward = () =>
          bed.s.request({
            method: 'POST',
            host: bed.upstreamHost,
            path: '/token',
            headers: { 'content-type': String(req.headers['content-type']), authorization: String(req.headers.authorization) },
            body: Buffer.concat(chunks).toString(),
          });
        const answer = (r: Awaited<ReturnType<typeof forward>>) => {
          upstreamAnswer = r.json();
          res.writeHead(r.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(r.text);
        };
        if (hold === 'request') held = { release: () => void forward().then(answer) };
        else if (hold === 'answer') void forward().then((r) => (held = { release: () => answer(r) }));
        else void forward().then(answer);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    proxy.close();
    await bed.s.close();
  });

  /** Sends the provider's token requests through the proxy (the other endpoints stay the upstream's). */
  async function throughProxy() {
    const p = (await bed.api('GET', `/connect/providers/${bed.providerId}`)).json();
    if (p.type === 'oauth2') return;
    assert.ok(p.revocation_endpoint, 'the upstream revokes (RFC 7009)');
    const port = (proxy.address() as AddressInfo).port;
    const patched = await bed.api('PATCH', `/connect/providers/${bed.providerId}`, {
      type: 'oauth2',
      issuer: p.issuer,
      authorization_endpoint: p.authorization_endpoint,
      token_endpoint: `http://127.0.0.1:${port}/token`,
      revocation_endpoint: p.revocation_endpoint,
    });
    assert.equal(patched.status, 200, patched.text);
  }

  /** Starts a retrieval that refreshes, and waits until the proxy holds it. */
  async function refreshing(accountId: string, what: 'request' | 'answer') {
    held = undefined;
    hold = what;
    clock.advance(570_000);
    const retrieval = bed.api('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);
    for (let i = 0; i < 100 && !held; i++) await sleep(20);
    // (Set by the proxy's handler, which the compiler cannot see through.)
    const h = held as { release: () => void } | undefined;
    assert.ok(h, 'the vault is refreshing upstream');
    hold = 'nothing';
    return { retrieval, release: h.release };
  }

  it('after the upstream rotated: the new tokens are not stored, are revoked upstream, and the retrieval answers 404 account_not_found', async () => {
    await throughProxy();
    const u = await bed.createUserPair('mid-refresh');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const { retrieval, release } = await refreshing(accountId, 'answer');
    assert.equal((await bed.api('DELETE', `/organizations/${bed.orgId}/members/${u.userId}`)).status, 204);
    release();
    expectError(await retrieval, 404, 'account_not_found');
    assert.ok(upstreamAnswer.refresh_token, 'the upstream rotated the refresh token');
    const refreshAgain = await bed.s.request({
      method: 'POST',
      host: bed.upstreamHost,
      path: '/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${bed.upstreamClient.client_id}:${bed.upstreamClient.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: upstreamAnswer.refresh_token }).toString(),
    });
    expectError(refreshAgain, 400, 'invalid_grant');
  });

  it('before the upstream saw the refresh: the removal revoked the refresh token, and the retrieval answers 404 account_not_found, not 502', async () => {
    await throughProxy();
    const u = await bed.createUserPair('before-refresh');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const { retrieval, release } = await refreshing(accountId, 'request');
    assert.equal((await bed.api('DELETE', `/organizations/${bed.orgId}/members/${u.userId}`)).status, 204);
    release();
    expectError(await retrieval, 404, 'account_not_found');
    const reauth = (await bed.api('GET', '/events?types=connected_account.reauthorization_required&limit=100')).json().data;
    assert.ok(!reauth.some((e: { data: { account_id: string } }) => e.data.account_id === accountId), 'a removed account is not marked');
  });
});
