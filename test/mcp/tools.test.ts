import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v1, type Api } from '../helpers/v1.js';
import { startSigninServer, type SigninTestServer } from '../signin/helpers.js';
import { callTool, mcpUserToken } from './mcp-helpers-server.js';

const ALL = 'mcp:read mcp:connected_accounts mcp:credentials';

describe('/mcp tools: scopes, memberships, tool errors and audit', () => {
  let s: SigninTestServer;
  let api: Api;
  let orgA: string;
  let orgB: string;
  let ada: { id: string };
  let bob: { id: string };
  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
    ada = await s.createUser('ada@example.com');
    bob = await s.createUser('bob@example.com');
    const carol = await s.createUser('carol@example.com');
    orgA = (await api('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'B' })).json().id;
    for (const [org, user, role] of [
      [orgA, ada.id, 'admin'],
      [orgA, bob.id, 'member'],
      [orgB, carol.id, 'admin'],
    ] as const) {
      const m = await api('POST', `/organizations/${org}/members`, { user_id: user, role });
      assert.equal(m.status, 201, m.text);
    }
  });
  after(() => s.close());

  it('lists the organizations and members of the signed-in user only', async () => {
    const t = await mcpUserToken(s, 'ada@example.com', ALL);
    const orgs = await callTool(s, t, 'list_organizations');
    assert.deepEqual(orgs.body, { organizations: [{ id: orgA, name: 'A', role: 'admin' }] });
    const members = await callTool(s, t, 'list_members', { organization_id: orgA });
    assert.deepEqual((members.body.members as Array<{ email: string }>).map((m) => m.email).sort(), ['ada@example.com', 'bob@example.com']);
    const other = await callTool(s, t, 'list_members', { organization_id: orgB });
    assert.equal(other.isError, true);
    assert.equal(other.body.error, 'not_found');
  });

  it('creates a credential offer only for an admin of the organization', async () => {
    const adaToken = await mcpUserToken(s, 'ada@example.com', ALL);
    const made = await callTool(s, adaToken, 'create_credential_offer', {
      organization_id: orgA,
      credential_configuration_id: 'OrganizationMembership',
      user_id: bob.id,
    });
    assert.equal(made.isError, false, made.text);
    assert.ok(String(made.body.credential_offer_uri).startsWith(`${s.issuer}/credentials/offers/`), made.text);
    const bobToken = await mcpUserToken(s, 'bob@example.com', ALL);
    const refused = await callTool(s, bobToken, 'create_credential_offer', {
      organization_id: orgA,
      credential_configuration_id: 'OrganizationMembership',
      user_id: bob.id,
    });
    assert.equal(refused.isError, true);
    assert.equal(refused.body.error, 'forbidden');
  });

  it('answers an unknown connected account as account_not_found', async () => {
    const t = await mcpUserToken(s, 'ada@example.com', ALL);
    const r = await callTool(s, t, 'get_connected_account_token', { account_id: 'acct_00000000000000000000000000' });
    assert.equal(r.isError, true);
    assert.equal(r.body.error, 'account_not_found');
  });

  it('answers invalid input as a tool error without a stack trace', async () => {
    const t = await mcpUserToken(s, 'ada@example.com', ALL);
    const r = await callTool(s, t, 'list_members', { organization_id: 'not-an-org' });
    assert.equal(r.isError, true);
    assert.match(r.text, /org_ id/);
    assert.doesNotMatch(r.text, /\n\s+at /);
    // The SDK refuses it before the tool runs; the call is audited all the same, never its arguments.
    const events = (await api('GET', '/events?types=mcp.tool.called&limit=100')).json().data as Array<{
      organization_id: string | null;
      data: Record<string, unknown>;
    }>;
    const refused = events.filter((e) => e.data.tool === 'list_members' && e.data.error === 'invalid_request');
    assert.equal(refused.length, 1, JSON.stringify(events));
    assert.deepEqual(refused[0]!.data, {
      tool: 'list_members',
      client_id: refused[0]!.data.client_id,
      user_id: ada.id,
      outcome: 'error',
      error: 'invalid_request',
    });
    assert.equal(refused[0]!.organization_id, null);
    assert.ok(!JSON.stringify(events).includes('not-an-org'), 'the arguments are not recorded');
  });

  it('a valid call is audited once, and a name that is not a tool (even an Object property) is not a tool', async () => {
    const t = await mcpUserToken(s, 'ada@example.com', 'mcp:read');
    const before = (await api('GET', '/events?types=mcp.tool.called&limit=100')).json().data.length as number;
    assert.equal((await callTool(s, t, 'list_members', { organization_id: orgA })).isError, false);
    for (const name of ['constructor', '__proto__', 'toString', 'no_such_tool']) {
      const r = await callTool(s, t, name);
      assert.equal(r.isError, true, name);
      assert.match(r.text, /Tool .* (not found|disabled)/, name); // the SDK's own answer
    }
    const after = (await api('GET', '/events?types=mcp.tool.called&limit=100&order=desc')).json().data as Array<{ data: Record<string, unknown> }>;
    assert.equal(after.length, before + 1, 'one event: the list_members call');
    assert.deepEqual([after[0]!.data.tool, after[0]!.data.outcome], ['list_members', 'success']);
  });

  it('audits each call with tool, client, user and outcome, never the arguments', async () => {
    const t = await mcpUserToken(s, 'bob@example.com', ALL);
    await callTool(s, t, 'whoami');
    await callTool(s, t, 'create_credential_offer', { organization_id: orgA, credential_configuration_id: 'OrganizationMembership', user_id: bob.id });
    const events = (await api('GET', '/events?types=mcp.tool.called&limit=100')).json().data as Array<{
      actor: { type: string };
      organization_id: string | null;
      data: Record<string, unknown>;
    }>;
    const bobs = events.filter((e) => e.data.user_id === bob.id);
    const whoami = bobs.find((e) => e.data.tool === 'whoami')!;
    assert.equal(whoami.data.outcome, 'success');
    assert.equal(whoami.actor.type, 'oauth_client');
    assert.match(String(whoami.data.client_id), /^cli_/);
    const offer = bobs.find((e) => e.data.tool === 'create_credential_offer')!;
    assert.deepEqual(offer.data, { tool: 'create_credential_offer', client_id: offer.data.client_id, user_id: bob.id, outcome: 'error', error: 'forbidden' });
    assert.equal(offer.organization_id, orgA);
  });
});
