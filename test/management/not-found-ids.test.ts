import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDirectory, expectScimError, type Directory } from '../scim/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1 } from '../helpers/v1.js';

// An id in the path that names nothing is 404 not_found, whether it is well formed or not.
describe('ids that name nothing', () => {
  let s: TestServer;
  let dir: Directory;
  let orgId: string;
  before(async () => {
    s = await startTestServer();
    dir = await createDirectory(s);
    orgId = dir.orgId;
  });
  after(() => s.close());

  const malformed = ['org_doesnotexist0000000000', 'not-an-id', 'org_', 'ORG_0123456789ABCDEFGHJKMNPQRS', 'x'.repeat(300)];
  const wellFormedUnknown = (prefix: string) => `${prefix}_00000000000000000000000000`;

  it('on /v1 routes: 404 not_found, never 400', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    for (const bad of malformed) {
      const id = encodeURIComponent(bad);
      const cases: Array<[string, string]> = [
        ['GET', `/organizations/${id}`],
        ['PATCH', `/organizations/${id}`],
        ['DELETE', `/organizations/${id}`],
        ['GET', `/organizations/${id}/members`],
        ['GET', `/users/${id}`],
        ['DELETE', `/users/${id}/sessions`],
        ['DELETE', `/api_keys/${id}`],
        ['DELETE', `/organizations/${orgId}/api_keys/${id}`],
        ['DELETE', `/organizations/${orgId}/members/${id}`],
        ['GET', `/organizations/${orgId}/webhooks/${id}`],
        ['GET', `/organizations/${orgId}/directory/connections/${id}`],
        ['GET', `/oauth/clients/${id}`],
      ];
      for (const [method, path] of cases) {
        const r = await api(method, path, method === 'PATCH' ? { name: 'x' } : undefined);
        expectError(r, 404, 'not_found');
        assert.ok(!r.text.includes('stack'), `${method} ${path}`);
      }
    }
    expectError(await api('GET', `/organizations/${wellFormedUnknown('org')}`), 404, 'not_found');
    expectError(await api('GET', `/users/${wellFormedUnknown('user')}`), 404, 'not_found');
    expectError(await api('GET', `/oauth/clients/${wellFormedUnknown('cli')}`), 404, 'not_found');
  });

  it('on SCIM routes: 404 with the SCIM error schema', async () => {
    for (const bad of [...malformed, wellFormedUnknown('dir')]) {
      const id = encodeURIComponent(bad);
      expectScimError(await dir.scim('GET', `/Users/${id}`), 404);
      expectScimError(await dir.scim('DELETE', `/Groups/${id}`), 404);
    }
  });
});
