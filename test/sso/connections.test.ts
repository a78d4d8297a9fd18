import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { expectError, v1 } from '../helpers/v1.js';
import { type SsoTestServer, startSsoServer } from './helpers.js';

describe('SSO connections: /v1/organizations/{orgId}/sso/connections', () => {
  let s: SsoTestServer;
  let org: string;
  const path = () => `/organizations/${org}/sso/connections`;
  const oidc = (extra: Record<string, unknown> = {}) => ({ issuer: s.idpIssuer, client_id: 'keyhall-sp', client_secret: 'upstream-secret-value-1', ...extra });
  before(async () => {
    s = await startSsoServer();
    org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
  });
  after(() => s.close());

  it('creates an OIDC connection from the discovered issuer; the secret is never returned and is stored encrypted', async () => {
    const r = await s.api('POST', path(), {
      protocol: 'oidc',
      name: 'Acme IdP',
      group_roles: { Admins: 'admin' },
      oidc: oidc({ claims: { groups: 'roles' } }),
    });
    assert.equal(r.status, 201, r.text);
    const c = r.json();
    assert.match(c.id, /^sso_[0-9a-z]{26}$/);
    assert.equal(c.organization_id, org);
    assert.equal(c.enabled, true);
    assert.equal(c.default_role, 'member');
    assert.deepEqual(c.group_roles, { admins: 'admin' });
    assert.equal(c.oidc.issuer, s.idpIssuer);
    assert.equal(c.oidc.has_client_secret, true);
    assert.deepEqual(c.oidc.scopes, ['openid', 'email', 'profile']);
    assert.equal(c.oidc.pkce, true);
    assert.deepEqual(c.oidc.claims, { email: 'email', name: 'name', groups: 'roles' });
    // The upstream (a Keyhall tenant) lists RS256 and EdDSA: an asymmetric one is chosen.
    assert.equal(c.oidc.id_token_signed_response_alg, 'RS256');
    assert.equal(c.oidc.token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(c.oidc.redirect_uri, `${s.issuer}/sso/oidc/${c.id}/callback`);
    assert.ok(!r.text.includes('upstream-secret-value-1'));
    const got = await s.api('GET', `${path()}/${c.id}`);
    assert.equal(got.status, 200);
    assert.ok(!got.text.includes('upstream-secret-value-1'));
    const row = await s.server.ctx.db.kysely.selectFrom('sso_connections').select('secret_enc').where('id', '=', c.id).executeTakeFirstOrThrow();
    assert.match(row.secret_enc!, /^v1\./);
    assert.ok(!row.secret_enc!.includes('upstream-secret-value-1'));
    const listed = (await s.api('GET', path())).json().data;
    assert.ok(listed.some((x: { id: string }) => x.id === c.id));
    assert.ok(!JSON.stringify(listed).includes('upstream-secret-value-1'));
  });

  it('changes and deletes a connection, each with its audit event (never the secret)', async () => {
    const c = (await s.api('POST', path(), { protocol: 'oidc', name: 'To change', oidc: oidc() })).json();
    const p = await s.api('PATCH', `${path()}/${c.id}`, {
      name: 'Changed',
      enabled: false,
      default_role: 'admin',
      oidc: { client_secret: null, scopes: ['openid', 'email'] },
    });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.json().name, 'Changed');
    assert.equal(p.json().enabled, false);
    assert.equal(p.json().default_role, 'admin');
    assert.equal(p.json().oidc.has_client_secret, false);
    assert.equal(p.json().oidc.token_endpoint_auth_method, 'none');
    assert.deepEqual(p.json().oidc.scopes, ['openid', 'email']);
    const p2 = await s.api('PATCH', `${path()}/${c.id}`, { oidc: { client_secret: 'another-secret-value' } });
    assert.equal(p2.json().oidc.has_client_secret, true);
    assert.equal((await s.api('DELETE', `${path()}/${c.id}`)).status, 204);
    expectError(await s.api('GET', `${path()}/${c.id}`), 404, 'not_found');
    expectError(await s.api('DELETE', `${path()}/${c.id}`), 404, 'not_found');
    expectError(await s.api('PATCH', `${path()}/${c.id}`, { name: 'x' }), 404, 'not_found');
    const events = (await s.api('GET', `/events?organization_id=${org}&types=sso.connection.created,sso.connection.updated,sso.connection.deleted`)).json()
      .data;
    const mine = events.filter((e: { data: { connection_id: string } }) => e.data.connection_id === c.id);
    assert.deepEqual(
      mine.map((e: { type: string }) => e.type),
      ['sso.connection.created', 'sso.connection.updated', 'sso.connection.updated', 'sso.connection.deleted'],
    );
    assert.deepEqual(mine[1].data.fields, ['name', 'enabled', 'default_role', 'oidc.client_secret', 'oidc.scopes']);
    assert.ok(!JSON.stringify(events).includes('secret-value'));
  });

  it('default_role and group_roles accept any role usable in the organization (tenant-wide or its own); an unknown key is 400', async () => {
    assert.equal((await s.api('POST', '/roles', { key: 'support', name: 'Support' })).status, 201);
    assert.equal((await s.api('POST', `/organizations/${org}/roles`, { key: 'acme-ops', name: 'Ops' })).status, 201);
    const other = (await s.api('POST', '/organizations', { name: 'Other' })).json().id as string;
    assert.equal((await s.api('POST', `/organizations/${other}/roles`, { key: 'other-only', name: 'Other' })).status, 201);
    const r = await s.api('POST', path(), { protocol: 'oidc', name: 'Roles', default_role: 'support', group_roles: { Ops: 'acme-ops' }, oidc: oidc() });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().default_role, 'support');
    assert.deepEqual(r.json().group_roles, { ops: 'acme-ops' });
    const id = r.json().id as string;
    for (const body of [{ default_role: 'nope' }, { group_roles: { g: 'other-only' } }, { default_role: 'Not A Key' }]) {
      const bad = await s.api('PATCH', `${path()}/${id}`, body);
      expectError(bad, 400, 'invalid_request');
    }
    assert.match((await s.api('PATCH', `${path()}/${id}`, { default_role: 'nope' })).json().error_description, /default_role: no role nope/);
    assert.match(
      (await s.api('PATCH', `${path()}/${id}`, { group_roles: { g: 'other-only' } })).json().error_description,
      /group_roles\.g: no role other-only/,
    );
    expectError(await s.api('POST', path(), { protocol: 'oidc', name: 'x', default_role: 'other-only', oidc: oidc() }), 400, 'invalid_request');
    assert.equal((await s.api('PATCH', `${path()}/${id}`, { default_role: 'acme-ops', group_roles: { g: 'support' } })).status, 200);
    assert.equal((await s.api('DELETE', `${path()}/${id}`)).status, 204);
  });

  it('refuses every bad input with 400 invalid_request', async () => {
    const bad = async (body: unknown, pattern?: RegExp) => {
      const r = await s.api('POST', path(), body);
      expectError(r, 400, 'invalid_request');
      if (pattern) assert.match(r.json().error_description, pattern);
    };
    await bad({ name: 'x', oidc: oidc() });
    await bad({ protocol: 'ldap', name: 'x', oidc: oidc() });
    await bad({ protocol: 'oidc', name: '', oidc: oidc() });
    await bad({ protocol: 'oidc', name: 'x' });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc(), extra: 1 });
    await bad({ protocol: 'oidc', name: 'x', oidc: { ...oidc(), unknown: true } });
    await bad({ protocol: 'oidc', name: 'x', default_role: 'owner', oidc: oidc() });
    await bad({ protocol: 'oidc', name: 'x', group_roles: { g: 'owner' }, oidc: oidc() });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ client_id: '' }) });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ client_secret: '' }) });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ scopes: ['email'] }) }, /openid/);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ scopes: ['open id'] }) });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ claims: { email: 'a b' } }) });
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ client_secret: undefined, pkce: false }) }, /PKCE/);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'not a url' }) }, /^issuer: /);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'ftp://localhost/' }) }, /^issuer: /);
    // Refused by the egress policy before any connection: private and link-local addresses.
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'http://10.0.0.1' }) }, /issuer: .*not allowed|issuer: only https/);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'https://169.254.169.254' }) }, /issuer: destination address is not allowed/);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'https://nowhere.invalid' }) }, /issuer: host could not be resolved/);
    // Allowed, but not an OpenID Provider (nothing listens) or not the issuer it claims to be.
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: 'http://127.0.0.1:1' }) }, /issuer: OpenID Provider discovery failed/);
    await bad({ protocol: 'oidc', name: 'x', oidc: oidc({ issuer: `${s.idpIssuer}/other` }) }, /issuer: OpenID Provider discovery failed/);
    expectError(await s.api('POST', path(), 'not json'), 400, 'invalid_request');
    const c = (await s.api('POST', path(), { protocol: 'oidc', name: 'Patch target', oidc: oidc() })).json();
    expectError(await s.api('PATCH', `${path()}/${c.id}`, { protocol: 'saml' }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `${path()}/${c.id}`, { oidc: { scopes: ['profile'] } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `${path()}/${c.id}`, { oidc: { client_secret: null, pkce: false } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `${path()}/${c.id}`, { oidc: { issuer: 'http://10.1.2.3' } }), 400, 'invalid_request');
    expectError(await s.api('GET', `${path()}/sso_nope`), 404, 'not_found');
    expectError(await s.api('GET', `/organizations/org_00000000000000000000000000/sso/connections`), 404, 'not_found');
    expectError(
      await s.api('POST', `/organizations/org_00000000000000000000000000/sso/connections`, { protocol: 'oidc', name: 'x', oidc: oidc() }),
      404,
      'not_found',
    );
  });

  it('reads at most 256 KiB of an upstream answer', async () => {
    const big = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: 'x', padding: 'a'.repeat(400 * 1024) }));
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    try {
      const port = (big.address() as { port: number }).port;
      const r = await s.api('POST', path(), { protocol: 'oidc', name: 'Huge', oidc: oidc({ issuer: `http://127.0.0.1:${port}` }) });
      expectError(r, 400, 'invalid_request');
      assert.match(r.json().error_description, /issuer: OpenID Provider discovery failed \(the upstream answer exceeds 262144 bytes\)/);
    } finally {
      big.close();
    }
  });

  it('needs sso:write to change and sso:read to read, with a key of that organization', async () => {
    const other = (await s.api('POST', '/organizations', { name: 'Other' })).json().id;
    const keyOf = async (o: string, scopes: string[]) => (await s.api('POST', `/organizations/${o}/api_keys`, { name: 'k', scopes })).json().key;
    const reader = v1(s, await keyOf(org, ['sso:read']));
    const writer = v1(s, await keyOf(org, ['sso:write']));
    const stranger = v1(s, await keyOf(other, ['sso:read', 'sso:write']));
    assert.equal((await reader('GET', path())).status, 200);
    expectError(await reader('POST', path(), { protocol: 'oidc', name: 'x', oidc: oidc() }), 403, 'insufficient_scope');
    expectError(await writer('GET', path()), 403, 'insufficient_scope');
    assert.equal((await writer('POST', path(), { protocol: 'oidc', name: 'By org key', oidc: oidc() })).status, 201);
    expectError(await stranger('GET', path()), 403, 'forbidden');
    expectError(await v1(s, undefined)('GET', path()), 401, 'invalid_token');
  });
});
