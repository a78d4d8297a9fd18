/**
 * The main management flows, spoken only through the client generated from the server's own
 * OpenAPI document (`npm run openapi:client` → test/generated/keyhall-v1.d.ts, openapi-fetch).
 * `npm run typecheck` compiles this file against the generated types, so a route whose schema
 * changes breaks the build here; at run time every answer's status must be one the document
 * lists for that operation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from '../generated/keyhall-v1.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

/** Fails any answer whose status the document does not list for the operation, or an error body that is not the Error schema. */
function documentedStatuses(doc: Doc): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const op = doc.paths[schemaPath]?.[request.method.toLowerCase()];
      assert.ok(op, `${request.method} ${schemaPath} is not in the document`);
      assert.ok(String(response.status) in op.responses, `${request.method} ${schemaPath} answered ${response.status}, not in the document`);
      if (response.status >= 400) {
        const body = (await response.clone().json()) as Record<string, unknown>;
        assert.equal(typeof body.error, 'string');
        assert.equal(typeof body.error_description, 'string');
        assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
      }
      return response;
    },
  };
}

describe('the generated /v1 client walks the management flows', () => {
  let s: TestServer;
  let doc: Doc;
  let api: Client<paths>;
  const clientFor = (key: string) => {
    const c = createClient<paths>({ baseUrl: `http://127.0.0.1:${s.port}`, headers: { authorization: `Bearer ${key}` } });
    c.use(documentedStatuses(doc));
    return c;
  };

  before(async () => {
    // Webhook endpoints on loopback are allowed here; the dispatcher does not run during the test.
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 } });
    doc = (await fetch(`http://127.0.0.1:${s.port}/v1/openapi.json`).then((r) => r.json())) as Doc;
    api = clientFor(s.tenant.platformApiKey);
  });
  after(() => s.close());

  it('organizations: create, page through the list, update, read, delete', async () => {
    const created: components['schemas']['Organization'][] = [];
    for (const name of ['Acme', 'Globex', 'Initech']) {
      const { data, error, response } = await api.POST('/v1/organizations', { body: { name, slug: name.toLowerCase() } });
      assert.equal(response.status, 201);
      assert.equal(error, undefined);
      assert.ok(data);
      assert.match(data.id, /^org_/);
      created.push(data);
    }

    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const { data } = await api.GET('/v1/organizations', { params: { query: { limit: 2, ...(after ? { after } : {}) } } });
      assert.ok(data);
      assert.ok(data.data.length <= 2);
      seen.push(...data.data.map((o) => o.id));
      if (data.next_cursor === null) break;
      after = data.next_cursor;
    }
    assert.deepEqual(
      seen,
      created.map((o) => o.id),
    );

    const first = created[0]!;
    const patched = await api.PATCH('/v1/organizations/{orgId}', { params: { path: { orgId: first.id } }, body: { brand_primary_color: '#0A66C2' } });
    assert.equal(patched.data?.brand_primary_color, '#0a66c2');

    const conflict = await api.POST('/v1/organizations', { body: { name: 'Again', slug: 'acme' } });
    assert.equal(conflict.response.status, 409);
    assert.equal(conflict.error?.error, 'conflict');

    const gone = created[2]!;
    const del = await api.DELETE('/v1/organizations/{orgId}', { params: { path: { orgId: gone.id } } });
    assert.equal(del.response.status, 204);
    const missing = await api.GET('/v1/organizations/{orgId}', { params: { path: { orgId: gone.id } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.error, 'not_found');
  });

  it('users and members: create, add, change role, list, remove', async () => {
    const org = (await api.POST('/v1/organizations', { body: { name: 'Members Inc' } })).data!;
    const user = await api.POST('/v1/users', { body: { email: 'Ada@Members.test', name: 'Ada', password: 'correct horse battery' } });
    assert.equal(user.response.status, 201);
    assert.equal(user.data?.email, 'ada@members.test');
    assert.equal(user.data?.has_password, true);
    const userId = user.data!.id;

    const renamed = await api.PATCH('/v1/users/{userId}', { params: { path: { userId } }, body: { name: 'Ada Lovelace' } });
    assert.equal(renamed.data?.name, 'Ada Lovelace');
    const found = await api.GET('/v1/users', { params: { query: { email: 'ada@members.test' } } });
    assert.deepEqual(
      found.data?.data.map((u) => u.id),
      [userId],
    );

    const orgId = org.id;
    const added = await api.POST('/v1/organizations/{orgId}/members', { params: { path: { orgId } }, body: { user_id: userId } });
    assert.equal(added.response.status, 201);
    assert.equal(added.data?.role, 'member');
    const again = await api.POST('/v1/organizations/{orgId}/members', { params: { path: { orgId } }, body: { user_id: userId } });
    assert.equal(again.error?.error, 'conflict');

    const promoted = await api.PATCH('/v1/organizations/{orgId}/members/{userId}', { params: { path: { orgId, userId } }, body: { role: 'admin' } });
    assert.equal(promoted.data?.role, 'admin');
    const members = await api.GET('/v1/organizations/{orgId}/members', { params: { path: { orgId } } });
    assert.deepEqual(
      members.data?.data.map((m) => [m.user_id, m.role, m.user?.email]),
      [[userId, 'admin', 'ada@members.test']],
    );

    const removed = await api.DELETE('/v1/organizations/{orgId}/members/{userId}', { params: { path: { orgId, userId } } });
    assert.equal(removed.response.status, 204);
    assert.equal((await api.GET('/v1/organizations/{orgId}/members', { params: { path: { orgId } } })).data?.data.length, 0);
    assert.equal((await api.DELETE('/v1/users/{userId}', { params: { path: { userId } } })).response.status, 204);
  });

  it('API keys: mint an organization key, use it within its bounds, revoke it', async () => {
    const orgId = (await api.POST('/v1/organizations', { body: { name: 'Keys Ltd' } })).data!.id;
    const minted = await api.POST('/v1/organizations/{orgId}/api_keys', { params: { path: { orgId } }, body: { name: 'sync', scopes: ['members:read'] } });
    assert.equal(minted.response.status, 201);
    assert.ok(minted.data);
    assert.match(minted.data.key, /^sk_live_/);
    assert.equal(minted.data.organization_id, orgId);

    const orgKey = clientFor(minted.data.key);
    assert.equal((await orgKey.GET('/v1/organizations/{orgId}/members', { params: { path: { orgId } } })).response.status, 200);
    const tenantWide = await orgKey.GET('/v1/organizations');
    assert.equal(tenantWide.response.status, 403);
    assert.equal(tenantWide.error?.error, 'forbidden');
    const scope = await orgKey.POST('/v1/organizations/{orgId}/members', { params: { path: { orgId } }, body: { user_id: 'user_00000000000000000000000000' } });
    assert.equal(scope.response.status, 403);

    const listed = await api.GET('/v1/organizations/{orgId}/api_keys', { params: { path: { orgId } } });
    assert.deepEqual(
      listed.data?.data.map((k) => [k.id, k.key_prefix]),
      [[minted.data.id, minted.data.key.slice(0, 12)]],
    );
    const revoked = await api.DELETE('/v1/organizations/{orgId}/api_keys/{keyId}', { params: { path: { orgId, keyId: minted.data.id } } });
    assert.equal(revoked.response.status, 204);
    const after = await orgKey.GET('/v1/organizations/{orgId}/members', { params: { path: { orgId } } });
    assert.equal(after.response.status, 401);
    assert.equal(after.error?.error, 'invalid_token');
  });

  it('webhooks: register, list, read, delete', async () => {
    const orgId = (await api.POST('/v1/organizations', { body: { name: 'Hooks GmbH' } })).data!.id;
    const url = 'http://127.0.0.1:1/keyhall';
    const created = await api.POST('/v1/organizations/{orgId}/webhooks', { params: { path: { orgId } }, body: { url, events: ['member.added'] } });
    assert.equal(created.response.status, 201);
    assert.ok(created.data);
    assert.match(created.data.secret, /^whsec_/);
    const webhookId = created.data.endpoint_id;

    const list = await api.GET('/v1/organizations/{orgId}/webhooks', { params: { path: { orgId } } });
    assert.deepEqual(
      list.data?.data.map((w) => [w.endpoint_id, w.url]),
      [[webhookId, url]],
    );
    assert.equal(JSON.stringify(list.data).includes('whsec_'), false);
    const one = await api.GET('/v1/organizations/{orgId}/webhooks/{webhookId}', { params: { path: { orgId, webhookId } } });
    assert.deepEqual(one.data?.events, ['member.added']);
    const bad = await api.POST('/v1/organizations/{orgId}/webhooks', { params: { path: { orgId } }, body: { url: 'not a url' } });
    assert.equal(bad.response.status, 400);
    assert.equal(bad.error?.error, 'invalid_request');

    assert.equal((await api.DELETE('/v1/organizations/{orgId}/webhooks/{webhookId}', { params: { path: { orgId, webhookId } } })).response.status, 204);
    const gone = await api.GET('/v1/organizations/{orgId}/webhooks/{webhookId}', { params: { path: { orgId, webhookId } } });
    assert.equal(gone.error?.error, 'not_found');
  });

  it('events: the feed shows what the flows did, and the cursor moves forward', async () => {
    const org = (await api.POST('/v1/organizations', { body: { name: 'Audit AB' } })).data!;
    const first = await api.GET('/v1/events', { params: { query: { types: 'organization.created', limit: 100 } } });
    assert.ok(first.data);
    const mine = first.data.data.find((e) => e.organization_id === org.id);
    assert.ok(mine, 'organization.created for the new organization');
    assert.equal(mine.type, 'organization.created');
    assert.equal(mine.actor.type, 'api_key');
    assert.ok(first.data.next_cursor);

    const next = await api.GET('/v1/events', { params: { query: { after: first.data.next_cursor, types: 'organization.created' } } });
    assert.deepEqual(next.data?.data, []);
    const bad = await api.GET('/v1/events', { params: { query: { types: 'no.such_event' } } });
    assert.equal(bad.response.status, 400);
    assert.equal(bad.error?.error, 'invalid_request');
  });
});
