import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

const YUBIKEY = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';
const VIRTUAL = '01020304-0506-0708-0102-030405060708';

describe('/v1 organizations/{orgId}/webauthn_policy', () => {
  let s: TestServer;
  let api: Api;
  let org: string;
  let other: string;
  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    org = (await api('POST', '/organizations', { name: 'Acme' })).json().id;
    other = (await api('POST', '/organizations', { name: 'Other' })).json().id;
  });
  after(() => s.close());

  it('sets, reads, normalises and clears the allowlist; the organization shows it; each change is audited', async () => {
    const initial = await api('GET', `/organizations/${org}/webauthn_policy`);
    assert.equal(initial.status, 200, initial.text);
    assert.equal(initial.json().aaguid_allowlist, null);

    const put = await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [YUBIKEY.toUpperCase(), VIRTUAL, YUBIKEY] });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(Object.keys(put.json()).sort(), ['aaguid_allowlist', 'organization_id', 'updated_at']);
    assert.equal(put.json().organization_id, org);
    assert.deepEqual(put.json().aaguid_allowlist, [YUBIKEY, VIRTUAL]);
    assert.match(put.json().updated_at, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual((await api('GET', `/organizations/${org}`)).json().webauthn_aaguid_allowlist, [YUBIKEY, VIRTUAL]);
    assert.deepEqual((await api('GET', `/organizations/${org}/webauthn_policy`)).json().aaguid_allowlist, [YUBIKEY, VIRTUAL]);
    // The other organization is untouched.
    assert.equal((await api('GET', `/organizations/${other}`)).json().webauthn_aaguid_allowlist, null);

    const empty = await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [] });
    assert.deepEqual(empty.json().aaguid_allowlist, []);
    const cleared = await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.json().aaguid_allowlist, null);
    assert.equal((await api('GET', `/organizations/${org}`)).json().webauthn_aaguid_allowlist, null);

    const events = (await api('GET', `/events?types=webauthn_policy.updated&organization_id=${org}`)).json().data;
    assert.deepEqual(
      events.map((e: { data: { aaguid_allowlist: unknown } }) => e.data.aaguid_allowlist),
      [[YUBIKEY, VIRTUAL], [], null],
    );
    assert.equal(events[0].actor.type, 'api_key');
    assert.equal(events[0].organization_id, org);
  });

  it('accepts exactly 100 entries', async () => {
    const list = Array.from({ length: 100 }, (_, i) => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`);
    const r = await api('PUT', `/organizations/${other}/webauthn_policy`, { aaguid_allowlist: list });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().aaguid_allowlist.length, 100);
  });

  it('refuses every bad input with 400 invalid_request naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'aaguid_allowlist'],
      [{ aaguid_allowlist: 'cb69481e-8ff7-4039-93ec-0a2729a154a8' }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: ['not-a-uuid'] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: ['cb69481e8ff7403993ec0a2729a154a8'] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: ['{cb69481e-8ff7-4039-93ec-0a2729a154a8}'] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: ['cb69481e-8ff7-4039-93ec-0a2729a154a8 '] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: ['gb69481e-8ff7-4039-93ec-0a2729a154a8'] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: [42] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: [null] }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: 7 }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: { a: 1 } }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: Array.from({ length: 101 }, (_, i) => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`) }, 'aaguid_allowlist'],
      [{ aaguid_allowlist: null, organization_id: org }, 'organization_id'],
    ];
    for (const [body, fieldName] of cases) {
      const r = await api('PUT', `/organizations/${org}/webauthn_policy`, body);
      expectError(r, 400, 'invalid_request');
      assert.match(r.json().error_description, new RegExp(fieldName), `${JSON.stringify(body).slice(0, 80)} → ${r.text}`);
    }
    expectError(await api('PUT', `/organizations/${org}/webauthn_policy`, '[]'), 400, 'invalid_request');
    expectError(await api('PUT', `/organizations/${org}/webauthn_policy`, '{"aaguid_allowlist": ['), 400, 'invalid_request');
    expectError(
      await api('PUT', `/organizations/${org}/webauthn_policy`, 'aaguid_allowlist=', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
    // A malformed id in the path names no resource (src/http/errors.ts).
    expectError(await api('PUT', '/organizations/not-an-id/webauthn_policy', { aaguid_allowlist: null }), 404, 'not_found');
    expectError(await api('GET', '/organizations/org_x/webauthn_policy'), 404, 'not_found');
    const unknown = 'org_00000000000000000000000000';
    expectError(await api('PUT', `/organizations/${unknown}/webauthn_policy`, { aaguid_allowlist: null }), 404, 'not_found');
    expectError(await api('GET', `/organizations/${unknown}/webauthn_policy`), 404, 'not_found');
    expectError(await api('DELETE', `/organizations/${org}/webauthn_policy`), 405, 'method_not_allowed');
    // Nothing changed.
    assert.equal((await api('GET', `/organizations/${org}`)).json().webauthn_aaguid_allowlist, null);
  });

  it('needs webauthn_policy:write / :read, and an org key reaches only its own organization', async () => {
    const mint = async (scopes: string[]) => (await api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes })).json().key as string;
    const writer = v1(s, await mint(['webauthn_policy:write', 'webauthn_policy:read']));
    const reader = v1(s, await mint(['webauthn_policy:read']));
    const stranger = v1(s, await mint(['organizations:read']));
    assert.equal((await writer('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [VIRTUAL] })).status, 200);
    assert.deepEqual((await reader('GET', `/organizations/${org}/webauthn_policy`)).json().aaguid_allowlist, [VIRTUAL]);
    expectError(await reader('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: null }), 403, 'insufficient_scope');
    expectError(await stranger('GET', `/organizations/${org}/webauthn_policy`), 403, 'insufficient_scope');
    // Another organization's id: forbidden even with the permission.
    expectError(await writer('PUT', `/organizations/${other}/webauthn_policy`, { aaguid_allowlist: null }), 403, 'forbidden');
    expectError(await writer('GET', `/organizations/${other}/webauthn_policy`), 403, 'forbidden');
    expectError(await v1(s, undefined)('GET', `/organizations/${org}/webauthn_policy`), 401, 'invalid_token');
    // Another tenant's organization id is not found there.
    const t2 = await s.createTenant('tenant-two.test');
    const api2 = v1(s, t2.platformApiKey, 'tenant-two.test');
    expectError(await api2('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: null }), 404, 'not_found');
    assert.deepEqual((await api('GET', `/organizations/${org}/webauthn_policy`)).json().aaguid_allowlist, [VIRTUAL]);
  });
});
