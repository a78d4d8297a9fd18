/**
 * Every route under /v1/organizations/{orgId} answers 404 not_found for an organization that
 * does not exist (list routes too, never an empty page), and a key bound to another organization
 * still gets 403 forbidden there. The routes come from the served OpenAPI document, so a new one
 * is covered without touching this test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

type Doc = { paths: Record<string, Record<string, unknown>> };
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const UNKNOWN_ORG = 'org_00000000000000000000000000';

describe('routes under an organization that does not exist', () => {
  let s: TestServer;
  let platform: Api;
  let operations: Array<{ method: string; template: string }>;
  let orgId: string;
  before(async () => {
    s = await startTestServer();
    platform = v1(s, s.tenant.platformApiKey);
    const doc = (await s.request({ path: '/v1/openapi.json' })).json() as Doc;
    operations = Object.entries(doc.paths)
      .filter(([path]) => path === '/v1/organizations/{orgId}' || path.startsWith('/v1/organizations/{orgId}/'))
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => METHODS.includes(m))
          .map((method) => ({ method: method.toUpperCase(), template: path.slice('/v1'.length) })),
      );
    orgId = (await platform('POST', '/organizations', { name: 'Real' })).json().id;
  });
  after(() => s.close());

  /** The path with the organization given and every other parameter a well-formed id that names nothing. */
  const pathOf = (template: string, org: string) => template.replace('{orgId}', org).replace(/\{[A-Za-z]+\}/g, 'x_00000000000000000000000000');
  const call = (api: Api, method: string, path: string) => api(method, path, ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined);

  it('the sweep covers the organization routes, lists included', () => {
    const keys = operations.map((o) => `${o.method} ${o.template}`);
    assert.ok(operations.length >= 40, `only ${operations.length} operations`);
    for (const k of [
      'GET /organizations/{orgId}/api_keys',
      'GET /organizations/{orgId}/members',
      'GET /organizations/{orgId}/webhooks',
      'GET /organizations/{orgId}',
    ]) {
      assert.ok(keys.includes(k), k);
    }
  });

  it('a platform key gets 404 not_found on every one (before any body or query check)', async () => {
    const wrong: string[] = [];
    for (const { method, template } of operations) {
      const r = await call(platform, method, pathOf(template, UNKNOWN_ORG));
      if (r.status !== 404 || r.json().error !== 'not_found' || r.json().error_description !== 'organization not found')
        wrong.push(`${method} ${template}: ${r.status} ${r.text.slice(0, 120)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('a key bound to another organization gets 403 forbidden on every one, whether that organization exists or not', async () => {
    const bound = v1(
      s,
      (await platform('POST', `/organizations/${orgId}/api_keys`, { name: 'bound', scopes: ['organizations:read', 'members:read', 'api_keys:read'] })).json()
        .key,
    );
    const other = (await platform('POST', '/organizations', { name: 'Other' })).json().id as string;
    const wrong: string[] = [];
    for (const { method, template } of operations) {
      for (const org of [UNKNOWN_ORG, other]) {
        const r = await call(bound, method, pathOf(template, org));
        if (r.status !== 403 || r.json().error !== 'forbidden') wrong.push(`${method} ${template} (${org}): ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
    assert.deepEqual(wrong, []);
    // Its own organization's lists still answer.
    const members = await bound('GET', `/organizations/${orgId}/members`);
    assert.equal(members.status, 200, members.text);
  });
});
