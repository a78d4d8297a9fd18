import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { type SigninTestServer, startSigninServer } from '../signin/helpers.js';

const DOCS = 'https://api.example/docs';

/**
 * Issue 31 point 4: a client_credentials client bound to an organization with roles there; its
 * tokens carry org_id, org_roles and permissions (the roles' permissions for the audience ∩ the
 * scopes), verified by jose against the published JWKS. The binding is managed under the
 * organization; only a platform key binds a client, and an organization's key changes the roles of its own bound clients.
 */
describe('machine clients in an organization', () => {
  let s: SigninTestServer;
  let api: Api;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  let orgA: string;
  let orgB: string;
  let statements: string[] = [];

  const orgKey = async (org: string, scopes: string[]) => (await api('POST', `/organizations/${org}/api_keys`, { name: 'org', scopes })).json().key as string;
  const machine = async () => {
    const c = await api('POST', '/clients', {
      client_name: 'worker',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'read:docs write:docs admin:docs',
      allowed_resources: [DOCS],
    });
    assert.equal(c.status, 201, c.text);
    return { id: c.json().client_id as string, secret: c.json().client_secret as string };
  };
  const token = (c: { id: string; secret: string }, scope = 'read:docs write:docs admin:docs') =>
    s.post('/token', { grant_type: 'client_credentials', resource: DOCS, scope }, { authorization: basic(c.id, c.secret) });
  const verified = async (c: { id: string; secret: string }, scope?: string) => {
    const t = await token(c, scope);
    assert.equal(t.status, 200, t.text);
    return (await jwtVerify(t.json().access_token, jwks, { issuer: s.issuer, audience: DOCS, typ: 'at+jwt' })).payload;
  };

  before(async () => {
    s = await startSigninServer({ onStatement: (sql) => statements.push(sql) });
    api = v1(s, s.tenant.platformApiKey);
    jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const rs = await api('POST', '/resource_servers', {
      name: 'Docs',
      identifier: DOCS,
      permissions: [{ name: 'read:docs' }, { name: 'write:docs' }, { name: 'admin:docs' }],
    });
    assert.equal(rs.status, 201, rs.text);
    const perm = (p: string) => ({ resource_server_id: rs.json().id, permission: p });
    assert.equal((await api('POST', '/roles', { key: 'editor', name: 'Editor', permissions: [perm('read:docs'), perm('write:docs')] })).status, 201);
    orgA = (await api('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'B' })).json().id;
    assert.equal((await api('POST', `/organizations/${orgA}/roles`, { key: 'auditor', name: 'Auditor', permissions: [perm('admin:docs')] })).status, 201);
    assert.equal((await api('POST', `/organizations/${orgB}/roles`, { key: 'b-only', name: 'B only', permissions: [perm('admin:docs')] })).status, 201);
  });
  after(() => s.close());

  it("a bound client's tokens carry org_id, org_roles and permissions; role changes apply to the next token; unbinding removes them", async () => {
    const c = await machine();
    assert.equal((await verified(c)).org_id, undefined, 'unbound: no organization claims');

    const put = await api('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['editor'] });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(
      { ...put.json(), updated_at: undefined },
      { client_id: c.id, client_name: 'worker', organization_id: orgA, roles: ['editor'], updated_at: undefined },
    );
    let at = await verified(c);
    assert.equal(at.org_id, orgA);
    assert.deepEqual(at.org_roles, ['editor']);
    assert.deepEqual(at.permissions, ['read:docs', 'write:docs'], 'admin:docs was asked for, but no role gives it');
    assert.equal(at.sub, c.id);
    assert.deepEqual((await verified(c, 'read:docs')).permissions, ['read:docs'], 'intersected with the scopes requested');

    // The organization's own role too; the change applies to the next token.
    assert.equal((await api('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['editor', 'auditor'] })).status, 200);
    at = await verified(c);
    assert.deepEqual(at.org_roles, ['editor', 'auditor']);
    assert.deepEqual(at.permissions, ['read:docs', 'write:docs', 'admin:docs']);

    const listed = await api('GET', `/organizations/${orgA}/client_grants`);
    assert.deepEqual(
      listed.json().data.map((g: { client_id: string }) => g.client_id),
      [c.id],
    );
    assert.deepEqual((await api('GET', `/organizations/${orgA}/client_grants/${c.id}`)).json().roles, ['editor', 'auditor']);
    const events = (await api('GET', `/events?limit=100&types=client.organization_granted,client.organization_revoked`)).json().data;
    assert.deepEqual(events.at(-1).data, { client_id: c.id, organization_id: orgA, roles: ['editor', 'auditor'], previous_roles: ['editor'] });

    assert.equal((await api('DELETE', `/organizations/${orgA}/client_grants/${c.id}`)).status, 204);
    at = await verified(c);
    assert.equal(at.org_id, undefined, 'unbound: the next token has no organization');
    assert.equal(at.permissions, undefined);
    expectError(await api('GET', `/organizations/${orgA}/client_grants/${c.id}`), 404, 'not_found');
    expectError(await api('DELETE', `/organizations/${orgA}/client_grants/${c.id}`), 404, 'not_found');
  });

  it("an organization's key changes only its own bound clients' roles, with roles usable there; every refusal", async () => {
    const c = await machine();
    const own = v1(s, await orgKey(orgA, ['roles:read', 'roles:write']));
    // A tenant's client is not an organization's to take: only a platform key binds it.
    expectError(await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['auditor'] }), 403, 'forbidden');
    assert.equal((await verified(c)).org_id, undefined, 'the refused binding left the client unbound');
    assert.equal((await api('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['editor'] })).status, 200);
    const r = await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['auditor'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((await verified(c)).permissions, ['admin:docs']);

    expectError(await own('PUT', `/organizations/${orgB}/client_grants/${c.id}`, { roles: ['editor'] }), 403, 'forbidden');
    expectError(await own('GET', `/organizations/${orgB}/client_grants`), 403, 'forbidden');
    expectError(await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['b-only'] }), 400, 'invalid_request');
    expectError(await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['nope'] }), 400, 'invalid_request');
    expectError(await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: [] }), 400, 'invalid_request');
    expectError(await own('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['Not A Key'] }), 400, 'invalid_request');
    expectError(await own('PATCH', `/clients/${c.id}`, { client_name: 'mine' }), 403, 'forbidden');
    expectError(
      await v1(s, await orgKey(orgA, ['roles:read']))('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['editor'] }),
      403,
      'insufficient_scope',
    );
    // Bound to A: B (even with a platform key) cannot take it over; A unbinds first.
    expectError(await api('PUT', `/organizations/${orgB}/client_grants/${c.id}`, { roles: ['editor'] }), 409, 'conflict');
    expectError(await api('DELETE', `/organizations/${orgB}/client_grants/${c.id}`), 404, 'not_found');
    // Not a client_credentials client; no such client; no such organization.
    const web = await s.webClient();
    expectError(await api('PUT', `/organizations/${orgA}/client_grants/${web.client_id}`, { roles: ['editor'] }), 400, 'invalid_request');
    expectError(await api('PUT', `/organizations/${orgA}/client_grants/cli_nope`, { roles: ['editor'] }), 404, 'not_found');
    expectError(await api('PUT', `/organizations/org_nope/client_grants/${c.id}`, { roles: ['editor'] }), 404, 'not_found');
    expectError(await api('PUT', `/organizations/${orgA}/client_grants/${c.id}`, { roles: ['editor'], extra: 1 }), 400, 'invalid_request');

    // Deleting the organization ends the claims: the next token has none.
    const orgC = (await api('POST', '/organizations', { name: 'C' })).json().id as string;
    const d = await machine();
    assert.equal((await api('PUT', `/organizations/${orgC}/client_grants/${d.id}`, { roles: ['editor'] })).status, 200);
    assert.equal((await verified(d)).org_id, orgC);
    assert.equal((await api('DELETE', `/organizations/${orgC}`)).status, 204);
    assert.equal((await verified(d)).org_id, undefined);
  });

  it('the token endpoint costs one more statement for a bound client, none for an unbound one', async () => {
    const unbound = await machine();
    const bound = await machine();
    assert.equal((await api('PUT', `/organizations/${orgA}/client_grants/${bound.id}`, { roles: ['editor'] })).status, 200);
    // The fewest statements of a few warm exchanges (an occasional background sweep is not the exchange's).
    const count = async (c: { id: string; secret: string }) => {
      await token(c); // warm the caches
      const seen: string[][] = [];
      for (let i = 0; i < 3; i++) {
        statements = [];
        assert.equal((await token(c)).status, 200);
        seen.push(statements);
      }
      return seen.reduce((a, b) => (b.length < a.length ? b : a));
    };
    const plain = await count(unbound);
    const withOrg = await count(bound);
    assert.equal(withOrg.length, plain.length + 1, JSON.stringify({ plain, withOrg }));
    assert.equal(plain.filter((q) => /"roles"|\broles\b/.test(q)).length, 0);
    assert.equal(withOrg.filter((q) => /"roles"|\broles\b/.test(q)).length, 1);
  });
});
