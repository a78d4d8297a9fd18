import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { verifyAccessToken } from '../../packages/sdk/src/index.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { type Browser, callbackParams, REDIRECT, type SigninTestServer, signIn, startSigninServer } from '../signin/helpers.js';

const DOCS = 'https://api.example/docs';
const BILLING = 'https://api.example/billing';
const SCOPE = 'openid offline_access read:docs write:docs admin:docs';

/**
 * Issue 31: organization-scoped sign-in. A token from `/authorize?organization=` carries org_id,
 * org_roles and `permissions` (the roles' permissions of the audience ∩ the scopes), which an
 * API verifies on its own (jose against the published JWKS).
 */
describe('organization-scoped sign-in and tokens', () => {
  let s: SigninTestServer;
  let api: Api;
  let web: { client_id: string; client_secret: string };
  let docs: string;
  let orgA: string;
  let orgB: string;
  let alice: { id: string; email: string };
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  /** The API's own check, as a resource server written with jose would do it. */
  async function apiAccepts(token: string, org: string, permission: string): Promise<boolean> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer: s.issuer, audience: DOCS, typ: 'at+jwt' }));
    } catch {
      return false;
    }
    return payload.org_id === org && Array.isArray(payload.permissions) && (payload.permissions as string[]).includes(permission);
  }

  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
    jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const rs = await api('POST', '/resource_servers', {
      name: 'Docs',
      identifier: DOCS,
      permissions: [{ name: 'read:docs', description: 'Read documents' }, { name: 'write:docs', description: 'Write documents' }, { name: 'admin:docs' }],
    });
    assert.equal(rs.status, 201, rs.text);
    docs = rs.json().id;
    assert.equal((await api('POST', '/resource_servers', { name: 'Billing', identifier: BILLING, scopes: ['write:docs'] })).status, 201);
    const perm = (p: string) => ({ resource_server_id: docs, permission: p });
    assert.equal((await api('POST', '/roles', { key: 'editor', name: 'Editor', permissions: [perm('read:docs'), perm('write:docs')] })).status, 201);
    assert.equal((await api('POST', '/roles', { key: 'viewer', name: 'Viewer', permissions: [perm('read:docs')] })).status, 201);
    orgA = (await api('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'B' })).json().id;
    alice = await s.createUser('alice@example.com');
    assert.equal((await api('POST', `/organizations/${orgA}/members`, { user_id: alice.id, roles: ['editor'] })).status, 201);
    assert.equal((await api('POST', `/organizations/${orgB}/members`, { user_id: alice.id })).status, 201);
    web = await s.webClient({ scope: SCOPE, allowed_resources: [DOCS, BILLING] });
  });
  after(() => s.close());

  const authorizePath = (extra: Record<string, string>) =>
    `/authorize?${new URLSearchParams({ client_id: web.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: SCOPE, resource: DOCS, state: 's', ...extra })}`;

  /** Runs /authorize (signing in if asked to) and returns the redirect to the client. */
  async function authorize(b: Browser, email: string, extra: Record<string, string>) {
    let r = await b.get(authorizePath(extra));
    if (/^\/login\?/.test(r.headers.location ?? '')) r = await signIn(b, r.headers.location!, email);
    return r;
  }
  const redeem = async (code: string) =>
    s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { authorization: basic(web.client_id, web.client_secret) });
  const refresh = (rt: string) =>
    s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(web.client_id, web.client_secret) });

  it("an API accepts a token whose permissions are what the user's roles give in the organization, and refuses one from another organization", async () => {
    const b = s.browser();
    const r = await authorize(b, alice.email, { organization: orgA });
    const t = await redeem(callbackParams(r).get('code')!);
    assert.equal(t.status, 200, t.text);
    const at = decodeJwt(t.json().access_token);
    assert.equal(at.org_id, orgA);
    assert.deepEqual(at.org_roles, ['editor']);
    assert.deepEqual([...(at.permissions as string[])].sort(), ['read:docs', 'write:docs'], 'admin:docs was asked for but no role gives it');
    const id = decodeJwt(t.json().id_token);
    assert.equal(id.org_id, orgA);
    assert.deepEqual(id.org_roles, ['editor']);
    assert.equal(await apiAccepts(t.json().access_token, orgA, 'write:docs'), true);
    assert.equal(await apiAccepts(t.json().access_token, orgA, 'admin:docs'), false);

    // The same user signed in to B (role `member`, no permission): refused by the API of A.
    const r2 = await authorize(s.browser(), alice.email, { organization: orgB });
    const t2 = await redeem(callbackParams(r2).get('code')!);
    assert.equal(t2.status, 200, t2.text);
    const at2 = decodeJwt(t2.json().access_token);
    assert.equal(at2.org_id, orgB);
    assert.deepEqual(at2.org_roles, ['member']);
    assert.deepEqual(at2.permissions, []);
    assert.equal(await apiAccepts(t2.json().access_token, orgA, 'write:docs'), false);
    assert.equal(await apiAccepts(t2.json().access_token, orgB, 'write:docs'), false);

    // @keyhall/sdk's verifier checks an organization token's permissions, not the scope asked for.
    const verify = (token: string, permission: string, organization?: string) =>
      verifyAccessToken(token, { issuer: s.issuer, audience: DOCS, requiredPermissions: [permission], ...(organization ? { organization } : {}) });
    assert.deepEqual((await verify(t.json().access_token, 'write:docs', orgA)).permissions?.sort(), ['read:docs', 'write:docs']);
    await assert.rejects(verify(t.json().access_token, 'admin:docs'), { error: 'insufficient_scope', status: 403 });
    assert.match(String(t2.json().scope), /\bwrite:docs\b/, 'asked for, and in the scope');
    await assert.rejects(verify(t2.json().access_token, 'write:docs'), { error: 'insufficient_scope', status: 403 });
    await assert.rejects(verify(t.json().access_token, 'read:docs', orgB), { error: 'insufficient_scope', status: 403 });

    // Without organization=: no organization claims.
    const plain = await redeem(callbackParams(await authorize(s.browser(), alice.email, {})).get('code')!);
    assert.equal(decodeJwt(plain.json().access_token).org_id, undefined);
  });

  it('permission changes apply to the next token and at once at /v1/authorize_check; refresh keeps the organization; leaving it ends refresh', async () => {
    const bob = await s.createUser('bob@example.com');
    assert.equal((await api('POST', `/organizations/${orgA}/members`, { user_id: bob.id, roles: ['editor'] })).status, 201);
    const t = await redeem(callbackParams(await authorize(s.browser(), bob.email, { organization: orgA })).get('code')!);
    assert.equal(t.status, 200, t.text);
    const check = (permission: string, resource?: string) =>
      api('POST', '/authorize_check', { user_id: bob.id, organization_id: orgA, permission, ...(resource ? { resource } : {}) });
    let c = await check('write:docs');
    assert.equal(c.status, 200, c.text);
    assert.deepEqual(c.json(), { allowed: true, roles: ['editor'] });
    assert.equal((await check('write:docs', DOCS)).json().allowed, true);
    assert.equal((await check('write:docs', BILLING)).json().allowed, false, 'the billing API declares write:docs too, but no role grants it there');

    assert.equal((await api('PATCH', `/organizations/${orgA}/members/${bob.id}`, { roles: ['viewer'] })).status, 200);
    c = await check('write:docs');
    assert.deepEqual(c.json(), { allowed: false, roles: ['viewer'] }, 'the check reads the roles now');
    const r1 = await refresh(t.json().refresh_token);
    assert.equal(r1.status, 200, r1.text);
    const at = decodeJwt(r1.json().access_token);
    assert.equal(at.org_id, orgA, 'refresh keeps the organization');
    assert.deepEqual(at.org_roles, ['viewer']);
    assert.deepEqual(at.permissions, ['read:docs'], 'the next token has what the roles give now');

    assert.equal((await api('DELETE', `/organizations/${orgA}/members/${bob.id}`)).status, 204);
    const families = await s.server.ctx.db.kysely
      .selectFrom('oauth_refresh_families')
      .select(['organization_id', 'revoked_at'])
      .where('sub', '=', bob.id)
      .execute();
    assert.equal(families.length, 1);
    assert.equal(families[0]!.organization_id, orgA);
    assert.notEqual(families[0]!.revoked_at, null, "removal revoked the organization's refresh tokens");
    const r2 = await refresh(r1.json().refresh_token);
    assert.equal(r2.status, 400, r2.text);
    assert.equal(r2.json().error, 'invalid_grant');
    assert.deepEqual((await check('read:docs')).json(), { allowed: false, roles: [] });
  });

  it('a refresh token of an organization the user left is refused even if the family was not revoked (invalid_grant)', async () => {
    const carol = await s.createUser('carol@example.com');
    assert.equal((await api('POST', `/organizations/${orgA}/members`, { user_id: carol.id, roles: ['viewer'] })).status, 201);
    const t = await redeem(callbackParams(await authorize(s.browser(), carol.email, { organization: orgA })).get('code')!);
    // The membership goes without the member route (as a cascade would): the grant check still refuses.
    await s.server.ctx.db.kysely.deleteFrom('members').where('user_id', '=', carol.id).execute();
    const r = await refresh(t.json().refresh_token);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json().error, 'invalid_grant');
  });

  it('organization= for a non-member: access_denied to the client (after sign-in)', async () => {
    const dave = await s.createUser('dave@example.com');
    const r = await authorize(s.browser(), dave.email, { organization: orgA });
    const p = callbackParams(r);
    assert.equal(p.get('error'), 'access_denied');
    assert.match(p.get('error_description') ?? '', /not a member/);
    assert.equal(p.get('code'), null);
  });

  it('prompt=none may not switch organization (login_required); it continues in the organization the session signed in to', async () => {
    const b = s.browser();
    const first = await authorize(b, alice.email, { organization: orgA });
    assert.ok(callbackParams(first).get('code'));
    const across = callbackParams(await b.get(authorizePath({ organization: orgB, prompt: 'none' })));
    assert.equal(across.get('error'), 'login_required');
    assert.equal(across.get('code'), null);
    const same = callbackParams(await b.get(authorizePath({ organization: orgA, prompt: 'none' })));
    assert.ok(same.get('code'), same.toString());
    // An interactive request switches (a new authorization).
    const switched = callbackParams(await b.get(authorizePath({ organization: orgB })));
    assert.ok(switched.get('code'));
    assert.ok(callbackParams(await b.get(authorizePath({ organization: orgB, prompt: 'none' }))).get('code'));
  });

  it('refusals of the role APIs: unknown permission, a role of another organization', async () => {
    expectError(
      await api('POST', '/roles', { key: 'bad', name: 'Bad', permissions: [{ resource_server_id: docs, permission: 'delete:docs' }] }),
      400,
      'invalid_request',
    );
    expectError(
      await api('POST', '/roles', { key: 'bad', name: 'Bad', permissions: [{ resource_server_id: 'rs_unknown', permission: 'read:docs' }] }),
      400,
      'invalid_request',
    );
    assert.equal((await api('POST', `/organizations/${orgB}/roles`, { key: 'b-only', name: 'B only' })).status, 201);
    const erin = await s.createUser('erin@example.com');
    expectError(await api('POST', `/organizations/${orgA}/members`, { user_id: erin.id, roles: ['b-only'] }), 400, 'invalid_request');
    assert.equal((await api('POST', `/organizations/${orgA}/members`, { user_id: erin.id, roles: ['viewer'] })).status, 201);
    expectError(await api('PATCH', `/organizations/${orgA}/members/${erin.id}`, { roles: ['b-only'] }), 400, 'invalid_request');
    expectError(await api('PATCH', `/organizations/${orgA}/members/${erin.id}`, { roles: ['nope'] }), 400, 'invalid_request');
  });
});
