import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

// Keys are how an operator reaches /v1: the last platform key able to mint keys is never revoked,
// and the CLI mints a key for an existing tenant when every key is lost anyway.
describe('API key lockout', () => {
  let s: TestServer;
  let root: Api;
  before(async () => {
    s = await startTestServer();
    root = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  const mint = async (api: Api, scopes: string[]) => {
    const r = await api('POST', '/api_keys', { name: 'k', scopes });
    assert.equal(r.status, 201, r.text);
    return r.json() as { id: string; key: string };
  };
  const ownId = async (api: Api) => {
    const r = await api('GET', '/api_keys?limit=100');
    return r.json().data as Array<{ id: string; scopes: string[] }>;
  };

  it('refuses to revoke the last live platform key holding api_keys:write (409, names the CLI)', async () => {
    const readOnly = await mint(root, ['api_keys:read', 'events:read']);
    const keys = await ownId(root);
    const rootId = keys.find((k) => k.scopes.includes('api_keys:write'))!.id;
    const r = await root('DELETE', `/api_keys/${rootId}`);
    expectError(r, 409, 'conflict');
    assert.match(r.json().error_description, /last platform API key holding api_keys:write/);
    assert.match(r.json().error_description, /keyhall api-keys create --tenant/);
    // The key still works; a key without api_keys:write does not count and can be revoked.
    assert.equal((await root('GET', '/api_keys')).status, 200);
    assert.equal((await root('DELETE', `/api_keys/${readOnly.id}`)).status, 204);
  });

  it('a key may revoke itself while another admin key remains (204)', async () => {
    const second = await mint(root, ['api_keys:write', 'api_keys:read', 'organizations:write']);
    const api2 = v1(s, second.key);
    const r = await api2('DELETE', `/api_keys/${second.id}`);
    assert.equal(r.status, 204, r.text);
    expectError(await api2('GET', '/api_keys'), 401, 'invalid_token');
  });

  it('two parallel revocations of the last two admin keys: exactly one succeeds', async () => {
    for (let round = 0; round < 8; round++) {
      const a = await mint(root, ['api_keys:write', 'api_keys:read', 'organizations:write']);
      const b = await mint(root, ['api_keys:write', 'api_keys:read', 'organizations:write']);
      // Retire every other admin key so that a and b are the last two.
      const apiA = v1(s, a.key);
      for (const k of await ownId(apiA)) {
        if (k.id !== a.id && k.id !== b.id && k.scopes.includes('api_keys:write')) assert.equal((await apiA('DELETE', `/api_keys/${k.id}`)).status, 204);
      }
      const apiB = v1(s, b.key);
      // Each revokes itself, at the same time.
      const [ra, rb] = await Promise.all([apiA('DELETE', `/api_keys/${a.id}`), apiB('DELETE', `/api_keys/${b.id}`)]);
      const statuses = [ra.status, rb.status].sort();
      assert.deepEqual(statuses, [204, 409], `${ra.text} / ${rb.text}`);
      const survivor = ra.status === 204 ? apiB : apiA;
      const live = (await ownId(survivor)).filter((k) => k.scopes.includes('api_keys:write'));
      assert.equal(live.length, 1);
      root = survivor;
    }
  });

  it('keyhall api-keys create mints a key for an existing tenant, shown once and audited', async () => {
    const r = runCli(['api-keys', 'create', '--tenant', s.tenant.tenant.host, '--json'], s.env);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.match(out.key, /^sk_live_/);
    assert.equal(out.organization_id, null);
    assert.ok(out.scopes.includes('api_keys:write'));
    const fresh = v1(s, out.key);
    assert.equal((await fresh('GET', '/api_keys')).status, 200);
    const events = (await fresh('GET', '/events?limit=100')).json().data as Array<{ type: string; actor: { type: string }; data: { key_id: string } }>;
    const created = events.find((e) => e.type === 'api_key.created' && e.data.key_id === out.key_id);
    assert.ok(created, 'api_key.created recorded');
    assert.equal(created.actor.type, 'system');
    // It appears in the list by prefix only.
    const listed = (await fresh('GET', '/api_keys?limit=100')).text;
    assert.ok(!listed.includes(out.key));
  });

  it('keyhall api-keys create takes --scopes and --org, and names the flag it refuses', async () => {
    const org = (await root('POST', '/organizations', { name: 'Cli' })).json().id;
    const ok = runCli(['api-keys', 'create', '--tenant', s.tenant.tenant.id, '--org', org, '--scopes', 'members:read,events:read'], s.env);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /shown once/);
    const key = /(sk_live_\S+)/.exec(ok.stdout)![1]!;
    assert.equal((await v1(s, key)('GET', `/organizations/${org}/members`)).status, 200);
    expectError(await v1(s, key)('GET', '/api_keys'), 403, 'forbidden');

    const cases: Array<[string[], RegExp]> = [
      [['api-keys', 'create'], /--tenant/],
      [['api-keys', 'create', '--tenant', 'nowhere.test'], /--tenant: no tenant nowhere\.test/],
      [['api-keys', 'create', '--tenant', s.tenant.tenant.id, '--scopes', 'users:read,root'], /--scopes: unknown permission root/],
      [['api-keys', 'create', '--tenant', s.tenant.tenant.id, '--org', 'acme'], /--org must be an organization id/],
      [['api-keys', 'create', '--tenant', s.tenant.tenant.id, '--org', 'org_00000000000000000000000000'], /--org: no organization/],
      [['api-keys', 'frobnicate'], /usage: keyhall api-keys create/],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args, s.env);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.ok(!r.stderr.includes('    at '), 'no stack trace');
    }
  });
});
