import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { startVaultBed, type VaultBed } from '../connect/helpers.js';
import { v1 } from '../helpers/v1.js';
import { connectClient, MemoryProvider, signInThroughBrowser, toolJson } from './helpers.js';

const MCP_SCOPES = ['mcp:read', 'mcp:connected_accounts', 'mcp:credentials'];

describe('/mcp with the MCP SDK client: 401 → discovery → DCR → hosted login with PKCE → tools → refresh', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  let issuer: string;
  before(async () => {
    bed = await startVaultBed({ clock });
    issuer = bed.s.tenant.tenant.issuer;
    const api = v1(bed.s, bed.s.tenant.platformApiKey);
    // /mcp as a registered resource server: its tokens live 5 minutes.
    const rs = await api('POST', '/resource_servers', { name: 'MCP', identifier: `${issuer}/mcp`, access_token_ttl_seconds: 300, scopes: MCP_SCOPES });
    assert.equal(rs.status, 201, rs.text);
    const settings = await api('PUT', '/mcp/settings', { client_registration: 'open' });
    assert.equal(settings.status, 200, settings.text);
  });
  after(() => bed.s.close());

  it('registers, signs the user in, lists and calls tools, and refreshes an expired token', async () => {
    const u = await bed.createUserPair('ada');
    const accountId = await bed.connect(u.email, u.upstreamEmail);

    const provider = new MemoryProvider();
    const first = connectClient(issuer, provider);
    await assert.rejects(first.connect(), UnauthorizedError);
    // Registered by DCR: a public client, every field echoed.
    assert.ok(provider.info && 'redirect_uris' in provider.info, JSON.stringify(provider.info));
    const clientId = provider.info.client_id;
    assert.match(clientId, /^cli_/);
    // Sent to the hosted login with PKCE S256 and the resource.
    const url = provider.authorizationUrl!;
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('resource'), `${issuer}/mcp`);

    const { code, iss, consented } = await signInThroughBrowser(bed.s.port, url, u.email);
    assert.equal(iss, issuer);
    assert.equal(consented, true, 'a registered client is third-party: the user consents');
    await first.transport.finishAuth(code);
    assert.ok(provider.saved?.refresh_token);

    const { client, connect } = connectClient(issuer, provider);
    await connect();
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(tools, ['create_credential_offer', 'get_connected_account_token', 'list_members', 'list_organizations', 'whoami']);

    const me = toolJson(await client.callTool({ name: 'whoami', arguments: {} }));
    assert.equal(me.user_id, u.userId);
    assert.equal(me.email, u.email);
    assert.equal(me.client_id, clientId);

    const token = await client.callTool({ name: 'get_connected_account_token', arguments: { account_id: accountId } });
    assert.notEqual((token as { isError?: boolean }).isError, true, JSON.stringify(token));
    assert.equal(typeof toolJson(token).access_token, 'string');
    // Another member's account of the same organization: 403 forbidden, before any tool runs.
    const bob = await bed.createUserPair('bob');
    const bobsAccount = await bed.connect(bob.email, bob.upstreamEmail);
    await assert.rejects(client.callTool({ name: 'get_connected_account_token', arguments: { account_id: bobsAccount } }), (err: Error & { code?: number }) => {
      assert.equal(err.code, 403);
      assert.match(err.message, /"error":"forbidden"/);
      return true;
    });
    // The retrieval is audited by the vault with the MCP client as the actor.
    const api = v1(bed.s, bed.s.tenant.platformApiKey);
    const calls = (await api('GET', '/events?types=mcp.tool.called&limit=100')).json().data as Array<{ data: Record<string, unknown> }>;
    assert.ok(
      calls.some(
        (e) => e.data.tool === 'get_connected_account_token' && e.data.outcome === 'error' && e.data.error === 'forbidden' && e.data.user_id === u.userId,
      ),
    );
    const retrieved = (await api('GET', '/events?types=connected_account.token_retrieved&limit=100')).json().data as Array<{
      actor: { type: string; id: string };
      data: { account_id: string; caller: Record<string, unknown> };
    }>;
    const mine = retrieved.find((e) => e.data.account_id === accountId && e.actor.type === 'oauth_client');
    assert.equal(mine?.actor.id, clientId);
    assert.deepEqual(mine?.data.caller, { type: 'oauth_client', client_id: clientId, user_id: u.userId, act: null });

    // The access token expires; the SDK refreshes it on the 401 and repeats the call.
    const before = provider.saved!.access_token;
    clock.advance(301_000 + 60_000); // past exp and the verifier's clock-skew allowance
    const again = toolJson(await client.callTool({ name: 'whoami', arguments: {} }));
    assert.equal(again.user_id, u.userId);
    assert.notEqual(provider.saved!.access_token, before);
    await client.close();
  });
});
