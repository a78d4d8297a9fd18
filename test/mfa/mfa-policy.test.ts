import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

describe('/v1 mfa_policy (tenant) and /v1 organizations/{orgId}/mfa_policy', () => {
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

  it('the tenant runs optional until set; PUT stores it; each change is audited', async () => {
    const initial = await api('GET', '/mfa_policy');
    assert.equal(initial.status, 200, initial.text);
    assert.deepEqual(initial.json(), { policy: 'optional', updated_at: null });
    for (const policy of ['required', 'off']) {
      const put = await api('PUT', '/mfa_policy', { policy });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.json().policy, policy);
      assert.match(put.json().updated_at, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual((await api('GET', '/mfa_policy')).json(), put.json());
    }
    const events = (await api('GET', '/events?types=mfa_policy.updated')).json().data;
    assert.deepEqual(
      events.map((e: { data: unknown; organization_id: unknown }) => [e.data, e.organization_id]),
      [
        [{ organization_id: null, policy: 'required' }, null],
        [{ organization_id: null, policy: 'off' }, null],
      ],
    );
    assert.equal(events[0].actor.type, 'api_key');
    assert.equal((await api('PUT', '/mfa_policy', { policy: 'optional' })).status, 200);
  });

  it("an organization's policy raises the tenant's, never lowers it (effective_policy); null clears it", async () => {
    assert.deepEqual((await api('GET', `/organizations/${org}/mfa_policy`)).json(), {
      organization_id: org,
      policy: null,
      effective_policy: 'optional',
      updated_at: null,
    });
    const raised = await api('PUT', `/organizations/${org}/mfa_policy`, { policy: 'required' });
    assert.equal(raised.status, 200, raised.text);
    assert.equal(raised.json().policy, 'required');
    assert.equal(raised.json().effective_policy, 'required');
    assert.match(raised.json().updated_at, /^\d{4}-/);
    // The other organization and the tenant are untouched.
    assert.equal((await api('GET', `/organizations/${other}/mfa_policy`)).json().policy, null);
    assert.equal((await api('GET', '/mfa_policy')).json().policy, 'optional');

    const lower = await api('PUT', `/organizations/${org}/mfa_policy`, { policy: 'off' });
    assert.equal(lower.json().policy, 'off');
    assert.equal(lower.json().effective_policy, 'optional', 'off cannot lower the tenant policy');
    assert.equal((await api('PUT', '/mfa_policy', { policy: 'required' })).status, 200);
    assert.equal((await api('GET', `/organizations/${org}/mfa_policy`)).json().effective_policy, 'required');
    assert.equal((await api('PUT', '/mfa_policy', { policy: 'off' })).status, 200);
    const optional = await api('PUT', `/organizations/${org}/mfa_policy`, { policy: 'optional' });
    assert.equal(optional.json().effective_policy, 'optional', 'an organization raises off to optional');

    const cleared = await api('PUT', `/organizations/${org}/mfa_policy`, { policy: null });
    assert.equal(cleared.status, 200);
    assert.deepEqual(cleared.json(), { organization_id: org, policy: null, effective_policy: 'off', updated_at: null });
    const events = (await api('GET', `/events?types=mfa_policy.updated&organization_id=${org}`)).json().data;
    assert.deepEqual(
      events.map((e: { data: { policy: unknown } }) => e.data.policy),
      ['required', 'off', 'optional', null],
    );
    assert.equal(events[0].data.organization_id, org);
    assert.equal((await api('PUT', '/mfa_policy', { policy: 'optional' })).status, 200);
  });

  it('refuses every bad input with its status and error, changing nothing', async () => {
    const bodies: Array<[unknown, string]> = [
      [{}, 'policy'],
      [{ policy: 'always' }, 'policy'],
      [{ policy: 'REQUIRED' }, 'policy'],
      [{ policy: 1 }, 'policy'],
      [{ policy: true }, 'policy'],
      [{ policy: ['required'] }, 'policy'],
      [{ policy: 'required', organization_id: org }, 'organization_id'],
    ];
    for (const [body, fieldName] of bodies) {
      for (const path of ['/mfa_policy', `/organizations/${org}/mfa_policy`]) {
        const r = await api('PUT', path, body);
        expectError(r, 400, 'invalid_request');
        assert.match(r.json().error_description, new RegExp(fieldName), `${path} ${JSON.stringify(body)} → ${r.text}`);
      }
    }
    // The tenant's policy cannot be cleared (it always has one); an organization's can.
    expectError(await api('PUT', '/mfa_policy', { policy: null }), 400, 'invalid_request');
    expectError(await api('PUT', '/mfa_policy', '[]'), 400, 'invalid_request');
    expectError(await api('PUT', '/mfa_policy', '{"policy": '), 400, 'invalid_request');
    expectError(await api('PUT', '/mfa_policy', 'policy=off', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    expectError(await api('PUT', '/organizations/not-an-id/mfa_policy', { policy: 'off' }), 404, 'not_found');
    const unknown = 'org_00000000000000000000000000';
    expectError(await api('PUT', `/organizations/${unknown}/mfa_policy`, { policy: 'required' }), 404, 'not_found');
    expectError(await api('GET', `/organizations/${unknown}/mfa_policy`), 404, 'not_found');
    expectError(await api('DELETE', '/mfa_policy'), 405, 'method_not_allowed');
    assert.equal((await api('GET', '/mfa_policy')).json().policy, 'optional');
    assert.equal((await api('GET', `/organizations/${org}/mfa_policy`)).json().policy, null);
    assert.equal((await api('GET', `/events?types=mfa_policy.updated&organization_id=${unknown}`)).json().data.length, 0);
  });

  it('needs mfa_policy:write / :read; the tenant policy takes a platform key; an org key reaches only its own organization', async () => {
    const mint = async (scopes: string[]) => (await api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes })).json().key as string;
    const writer = v1(s, await mint(['mfa_policy:write', 'mfa_policy:read']));
    const reader = v1(s, await mint(['mfa_policy:read']));
    assert.equal((await writer('PUT', `/organizations/${org}/mfa_policy`, { policy: 'required' })).status, 200);
    assert.equal((await reader('GET', `/organizations/${org}/mfa_policy`)).json().policy, 'required');
    expectError(await reader('PUT', `/organizations/${org}/mfa_policy`, { policy: null }), 403, 'insufficient_scope');
    expectError(await writer('PUT', `/organizations/${other}/mfa_policy`, { policy: 'required' }), 403, 'forbidden');
    expectError(await writer('GET', `/organizations/${other}/mfa_policy`), 403, 'forbidden');
    // An organization's key cannot set the tenant's policy, even with the permission.
    expectError(await writer('PUT', '/mfa_policy', { policy: 'off' }), 403, 'forbidden');
    expectError(await writer('GET', '/mfa_policy'), 403, 'forbidden');
    const platformReader = v1(s, (await api('POST', '/api_keys', { name: 'r', scopes: ['mfa_policy:read'] })).json().key);
    assert.equal((await platformReader('GET', '/mfa_policy')).status, 200);
    expectError(await platformReader('PUT', '/mfa_policy', { policy: 'off' }), 403, 'insufficient_scope');
    expectError(await v1(s, undefined)('GET', '/mfa_policy'), 401, 'invalid_token');
    // Another tenant's organization id is not found there; its tenant policy is its own.
    const t2 = await s.createTenant('tenant-two.test');
    const api2 = v1(s, t2.platformApiKey, 'tenant-two.test');
    expectError(await api2('PUT', `/organizations/${org}/mfa_policy`, { policy: 'off' }), 404, 'not_found');
    assert.equal((await api2('GET', '/mfa_policy')).json().policy, 'optional');
    // Deleting the organization deletes its policy.
    const gone = (await api('POST', '/organizations', { name: 'Gone' })).json().id;
    assert.equal((await api('PUT', `/organizations/${gone}/mfa_policy`, { policy: 'required' })).status, 200);
    assert.equal((await api('DELETE', `/organizations/${gone}`)).status, 204);
    expectError(await api('GET', `/organizations/${gone}/mfa_policy`), 404, 'not_found');
  });
});
