/**
 * docs/permissions.md and docs/api.md, checked against the server for every /v1 operation of the
 * served OpenAPI document: its `x-keyhall-permission` is what a key lacking it is refused for
 * (403 insufficient_scope), and its `x-keyhall-keys` is who may call it — an organization-bound
 * key gets 403 forbidden on a `platform` route and on another organization's `organization`
 * route, and is let through (any answer but 403) on its own organization's. A new route is
 * covered without touching this test; a document that says more than the server allows fails it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FULL_PRIVILEGE_ONLY, PERMISSIONS } from '../../src/management/permissions.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

type Operation = { method: string; template: string; permission: string; keys: 'platform' | 'organization' | 'any' };
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('every /v1 operation enforces the permission and the key binding its OpenAPI entry names', () => {
  let s: TestServer;
  let operations: Operation[];
  let orgA: string;
  let orgB: string;
  const keys: Record<string, Api> = {};

  before(async () => {
    s = await startTestServer();
    const platform = v1(s, s.tenant.platformApiKey);
    const doc = (await s.request({ path: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m, op]) => METHODS.includes(m) && typeof op['x-keyhall-permission'] === 'string')
        .map(([m, op]) => ({
          method: m.toUpperCase(),
          template: path.slice('/v1'.length),
          permission: op['x-keyhall-permission'] as string,
          keys: op['x-keyhall-keys'] as Operation['keys'],
        })),
    );
    orgA = (await platform('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await platform('POST', '/organizations', { name: 'B' })).json().id;
    const mint = async (org: string | null, scopes: string[]) =>
      v1(s, (await s.server.ctx.management.apiKeys.createAsOperator(s.tenant.tenant.id, org, { name: 'sweep', scopes })).key);
    const orgScopes = PERMISSIONS.filter((p) => !FULL_PRIVILEGE_ONLY.includes(p));
    keys.orgA = await mint(orgA, orgScopes);
    keys.orgB = await mint(orgB, orgScopes);
    // Two narrow platform keys: every route lacks the permission of at least one of them.
    keys.eventsOnly = await mint(null, ['events:read']);
    keys.usersOnly = await mint(null, ['users:read']);
  });
  after(() => s.close());

  const pathOf = (template: string, org: string) => template.replace('{orgId}', org).replace(/\{[A-Za-z]+\}/g, 'x_00000000000000000000000000');
  const call = (api: Api, op: Operation, org: string) =>
    api(op.method, pathOf(op.template, org), ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined);

  it('the document names a known permission and binding for every operation', () => {
    assert.ok(operations.length >= 80, `only ${operations.length} operations`);
    for (const op of operations) {
      assert.ok((PERMISSIONS as readonly string[]).includes(op.permission), `${op.method} ${op.template}: ${op.permission}`);
      assert.ok(['platform', 'organization', 'any'].includes(op.keys), `${op.method} ${op.template}: ${op.keys}`);
    }
    const add = operations.find((o) => o.method === 'POST' && o.template === '/organizations/{orgId}/members');
    assert.equal(add?.keys, 'platform', 'adding an existing user is for platform keys, as the server says');
  });

  it('a key without the permission: 403 insufficient_scope', async () => {
    for (const op of operations) {
      const key = op.permission === 'events:read' ? keys.usersOnly! : keys.eventsOnly!;
      const r = await call(key, op, orgA);
      assert.equal(r.status, 403, `${op.method} ${op.template}: ${r.status} ${r.text}`);
      assert.equal(r.json().error, 'insufficient_scope', `${op.method} ${op.template}`);
    }
  });

  it("an organization-bound key: forbidden on platform routes and on another organization's routes, let through on its own", async () => {
    for (const op of operations) {
      const where = `${op.method} ${op.template}`;
      if (op.keys === 'platform') {
        const r = await call(keys.orgA!, op, orgA);
        assert.equal(r.status, 403, `${where}: ${r.status} ${r.text}`);
        assert.equal(r.json().error, 'forbidden', where);
      } else if (op.keys === 'organization') {
        const other = await call(keys.orgB!, op, orgA);
        assert.equal(other.status, 403, `${where}: ${other.status} ${other.text}`);
        assert.equal(other.json().error, 'forbidden', where);
        if (FULL_PRIVILEGE_ONLY.includes(op.permission as (typeof FULL_PRIVILEGE_ONLY)[number]) || op.method === 'DELETE') continue;
        const own = await call(keys.orgA!, op, orgA);
        assert.notEqual(own.status, 403, `${where}: the document says its own organization's key may call it: ${own.text}`);
      }
    }
  });
});
