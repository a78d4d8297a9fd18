import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { expectError } from '../helpers/v1.js';
import { startVaultBed, type VaultBed } from './helpers.js';

/** How the vault answers when the upstream token endpoint misbehaves: 502, the account stays active. */
describe('upstream failures during a refresh', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  let hanging: net.Server;
  let answering: http.Server;
  let answer: { status: number; type: string; body: string } = { status: 500, type: 'text/html', body: '<h1>oops</h1>' };
  const sockets: net.Socket[] = [];
  before(async () => {
    bed = await startVaultBed({ clock, config: { upstreamTimeoutMs: 2500 } });
    hanging = net.createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
    answering = http.createServer((_req, res) => res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body)).listen(0, '127.0.0.1');
    await Promise.all([new Promise((r) => hanging.once('listening', r)), new Promise((r) => answering.once('listening', r))]);
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    hanging.close();
    answering.close();
    await bed.s.close();
  });

  const token = (accountId: string) => bed.api('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);
  const portOf = (s: net.Server | http.Server) => (s.address() as net.AddressInfo).port;

  async function withTokenEndpoint(url: string, fn: () => Promise<void>) {
    const p = (await bed.api('GET', `/connect/providers/${bed.providerId}`)).json();
    assert.equal(
      (
        await bed.api('PATCH', `/connect/providers/${bed.providerId}`, {
          type: 'oauth2',
          issuer: p.issuer,
          authorization_endpoint: p.authorization_endpoint,
          token_endpoint: url,
        })
      ).status,
      200,
    );
    try {
      await fn();
    } finally {
      assert.equal((await bed.api('PATCH', `/connect/providers/${bed.providerId}`, { type: 'oidc', issuer: p.issuer })).status, 200);
    }
  }

  async function expectTransientFailure(name: string, url: string, reason: string) {
    const u = await bed.createUserPair(name);
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    await withTokenEndpoint(url, async () => {
      clock.advance(570_000);
      const started = Date.now();
      expectError(await token(accountId), 502, 'upstream_refresh_failed');
      assert.ok(Date.now() - started < 15_000, 'bounded by KEYHALL_UPSTREAM_TIMEOUT_MS');
      const row = await bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
      assert.equal(row.status, 'active');
      assert.equal(row.refresh_owner, null);
      const events = (await bed.api('GET', '/events?types=connected_account.token_retrieval_failed&limit=100'))
        .json()
        .data.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);
      assert.equal(events.at(-1).data.reason, reason);
    });
    assert.equal((await token(accountId)).status, 200, 'refreshed once the upstream is back');
  }

  it('an upstream that never answers: 502 after the time limit', async () => {
    await expectTransientFailure('slow', `http://127.0.0.1:${portOf(hanging)}/token`, 'upstream_unreachable');
  });

  it('an upstream answering 500 with HTML: 502, not marked', async () => {
    answer = { status: 500, type: 'text/html', body: '<h1>oops</h1>' };
    await expectTransientFailure('broken', `http://127.0.0.1:${portOf(answering)}/token`, 'upstream_invalid_response');
  });

  it('an upstream refusing with another OAuth error (invalid_client): 502, not marked', async () => {
    answer = { status: 401, type: 'application/json', body: JSON.stringify({ error: 'invalid_client' }) };
    await expectTransientFailure('misconfigured', `http://127.0.0.1:${portOf(answering)}/token`, 'upstream_refused');
  });

  it('a token endpoint the egress policy refuses at request time: 502, not marked', async () => {
    const u = await bed.createUserPair('egress');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    // Registered while allowed; the stored URL is refused when used (written directly: the API would refuse it).
    await bed.s.server.ctx.db.kysely
      .updateTable('connect_providers')
      .set({ token_endpoint: 'http://10.0.0.1/token' })
      .where('id', '=', bed.providerId)
      .execute();
    try {
      clock.advance(570_000);
      expectError(await token(accountId), 502, 'upstream_refresh_failed');
    } finally {
      const p = (await bed.api('GET', `/connect/providers/${bed.providerId}`)).json();
      await bed.s.server.ctx.db.kysely
        .updateTable('connect_providers')
        .set({ token_endpoint: `${p.issuer}/token` })
        .where('id', '=', bed.providerId)
        .execute();
    }
    assert.equal((await token(accountId)).status, 200);
  });

  it('an expired token without a refresh token: 502 and needs_reauthorization', async () => {
    const u = await bed.createUserPair('norefresh');
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    await bed.s.server.ctx.db.kysely.updateTable('connected_accounts').set({ refresh_token_enc: null }).where('id', '=', accountId).execute();
    clock.advance(570_000);
    assert.equal((await token(accountId)).status, 200, 'still live: returned as is');
    clock.advance(60_000);
    expectError(await token(accountId), 502, 'upstream_refresh_failed');
    const row = await bed.s.server.ctx.db.kysely.selectFrom('connected_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'needs_reauthorization');
  });
});
