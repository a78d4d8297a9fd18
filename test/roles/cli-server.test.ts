import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { basic } from '../oauth/helpers.js';
import { Browser, callbackParams, PASSWORD, REDIRECT, signIn } from '../signin/helpers.js';

const API = 'https://api.example/projects';
const REPORTS = 'https://api.example/reports';

describe('organization roles on the quick start tenant (http://localhost:<port>, `keyhall serve` in its own process)', () => {
  let k: Keyhall;
  let issuer = '';
  let platformKey = '';
  before(async () => {
    k = await startKeyhall();
    ({ issuer, apiKey: platformKey } = k);
  });
  after(async () => {
    const out = k.output();
    assert.equal(await k.close(), 0, out);
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await r.json()) as Record<string, unknown>;
    assert.ok(r.ok, JSON.stringify(json));
    return json;
  };

  it('a member signs in to the organization; the API verifies the permissions her role gives; the check endpoint agrees', async () => {
    const rs = await api('POST', '/resource_servers', {
      name: 'Projects',
      identifier: API,
      permissions: [{ name: 'projects:read', description: 'List projects' }, { name: 'projects:delete' }],
    });
    await api('POST', '/roles', { key: 'reader', name: 'Reader', permissions: [{ resource_server_id: rs.id, permission: 'projects:read' }] });
    const org = (await api('POST', '/organizations', { name: 'Quick start' })).id as string;
    const user = await api('POST', '/users', { email: 'ada@example.com', password: PASSWORD });
    await api('POST', `/organizations/${org}/members`, { user_id: user.id, roles: ['reader'] });
    const client = await api('POST', '/clients', {
      client_name: 'Quick start app',
      grant_types: ['authorization_code'],
      redirect_uris: [REDIRECT],
      scope: 'openid projects:read projects:delete',
      allowed_resources: [API],
    });

    const url = new URL(issuer);
    const b = new Browser(Number(url.port), url.host);
    const query = new URLSearchParams({
      client_id: client.client_id as string,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid projects:read projects:delete',
      resource: API,
      organization: org,
      state: 'st',
    });
    const login = await b.get(`/authorize?${query}`);
    const done = await signIn(b, login.headers.location!, 'ada@example.com');
    const code = callbackParams(done).get('code')!;
    const t = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id as string, client.client_secret as string) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
    });
    const tokens = (await t.json()) as { access_token: string };
    assert.equal(t.status, 200, JSON.stringify(tokens));
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: API, typ: 'at+jwt' });
    assert.equal(payload.org_id, org);
    assert.deepEqual(payload.org_roles, ['reader']);
    assert.deepEqual(payload.permissions, ['projects:read']);

    assert.deepEqual(await api('POST', '/authorize_check', { user_id: user.id, organization_id: org, permission: 'projects:delete', resource: API }), {
      allowed: false,
      roles: ['reader'],
    });
    assert.deepEqual(await api('POST', '/authorize_check', { user_id: user.id, organization_id: org, permission: 'projects:read' }), {
      allowed: true,
      roles: ['reader'],
    });
  });

  it('a machine client bound to an organization gets org_id and permissions; a claims mapping puts metadata into the ID token', async () => {
    const rs = await api('POST', '/resource_servers', {
      name: 'Reports',
      identifier: REPORTS,
      permissions: [{ name: 'reports:read' }, { name: 'reports:write' }],
    });
    await api('POST', '/roles', { key: 'report-reader', name: 'Report reader', permissions: [{ resource_server_id: rs.id, permission: 'reports:read' }] });
    const org = (await api('POST', '/organizations', { name: 'Machines' })).id as string;
    const worker = await api('POST', '/clients', {
      client_name: 'worker',
      grant_types: ['client_credentials'],
      scope: 'reports:read reports:write',
      allowed_resources: [REPORTS],
    });
    await api('PUT', `/organizations/${org}/client_grants/${worker.client_id as string}`, { roles: ['report-reader'] });
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const t = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(worker.client_id as string, worker.client_secret as string) },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: REPORTS }).toString(),
    });
    const tokens = (await t.json()) as { access_token: string };
    assert.equal(t.status, 200, JSON.stringify(tokens));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: REPORTS, typ: 'at+jwt' });
    assert.equal(payload.org_id, org);
    assert.deepEqual(payload.org_roles, ['report-reader']);
    assert.deepEqual(payload.permissions, ['reports:read']);

    const user = await api('POST', '/users', { email: 'grace@example.com', password: PASSWORD, metadata: { department: 'Navy' } });
    const app = await api('POST', '/clients', {
      client_name: 'Claims app',
      grant_types: ['authorization_code'],
      redirect_uris: [REDIRECT],
      scope: 'openid',
      claims: [{ claim: 'department', from: 'metadata.department', tokens: ['id_token'] }],
    });
    const url = new URL(issuer);
    const b = new Browser(Number(url.port), url.host);
    const q = new URLSearchParams({ client_id: app.client_id as string, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'st' });
    const login = await b.get(`/authorize?${q}`);
    const code = callbackParams(await signIn(b, login.headers.location!, 'grace@example.com')).get('code')!;
    const r = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.client_id as string, app.client_secret as string) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
    });
    const ts = (await r.json()) as { id_token: string };
    assert.equal(r.status, 200, JSON.stringify(ts));
    const { payload: id } = await jwtVerify(ts.id_token, jwks, { issuer, audience: app.client_id as string });
    assert.equal(id.sub, user.id);
    assert.equal(id.department, 'Navy');
  });
});
