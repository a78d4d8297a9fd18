// Issue 12, items 6 and 8: validation messages in the client's terms, strict JSON bodies, and one
// list shape with one `limit` rule across /v1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

function expectMessage(r: HttpResponse, status: number, error: string, description: string | RegExp): void {
  expectError(r, status, error);
  const got = r.json().error_description as string;
  if (typeof description === 'string') assert.equal(got, description);
  else assert.match(got, description);
  assert.doesNotMatch(got, /received|expected|in querystring|body\/|NaN|Invalid input/i, got);
}

describe('/v1 conventions: validation messages, JSON bodies, lists', () => {
  let s: TestServer;
  let api: Api;
  let orgId: string;
  let webhookId: string;
  before(async () => {
    // Webhook endpoints on loopback (nothing listens: deliveries just stay in the log).
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 } });
    api = v1(s, s.tenant.platformApiKey);
    orgId = (await api('POST', '/organizations', { name: 'Conventions' })).json().id;
  });
  after(() => s.close());

  describe('validation messages name the field as sent and say what is wrong', () => {
    it('a query parameter that is not a number', async () => {
      expectMessage(await api('GET', '/organizations?limit=abc'), 400, 'invalid_request', 'limit: must be an integer from 1 to 100');
      expectMessage(await api('GET', '/organizations?limit=2.5'), 400, 'invalid_request', 'limit: must be an integer from 1 to 100');
    });

    it('a missing required field', async () => {
      expectMessage(await api('POST', '/organizations', {}), 400, 'invalid_request', 'name: is required');
      expectMessage(await api('POST', '/users', {}), 400, 'invalid_request', 'email: is required');
    });

    it('a field of the wrong type', async () => {
      expectMessage(await api('POST', '/organizations', { name: 42 }), 400, 'invalid_request', 'name: must be a string');
      expectMessage(await api('POST', '/organizations', { name: '' }), 400, 'invalid_request', 'name: must not be empty');
      expectMessage(await api('POST', '/organizations', { name: 'x'.repeat(201) }), 400, 'invalid_request', 'name: must be at most 200 characters long');
    });

    it('a nested field and an array element', async () => {
      const conn = await api('POST', `/organizations/${orgId}/directory/connections`, { name: 'HR', group_roles: { staff: 'owner' } });
      // Any role of the organization may be mapped (issue 31); one it does not have is named by its path.
      expectMessage(conn, 400, 'invalid_request', 'group_roles.staff: no role owner in this organization');
      const client = await api('POST', '/clients', { client_name: 'x', redirect_uris: ['https://ok.example/cb', 7] });
      expectMessage(client, 400, 'invalid_request', 'redirect_uris[1]: must be a string');
    });

    it('an unknown field and a wrong body type', async () => {
      expectMessage(await api('POST', '/organizations', { name: 'x', colour: 'blue' }), 400, 'invalid_request', 'colour: unknown field');
      expectMessage(await api('GET', '/organizations?colour=blue'), 400, 'invalid_request', 'colour: unknown field');
      expectMessage(await api('POST', '/organizations', [1]), 400, 'invalid_request', 'the body must be an object');
    });

    it('an id of the right prefix that names nothing is unknown, not a format error', async () => {
      expectMessage(await api('GET', '/organizations/org_abc'), 404, 'not_found', 'organization not found');
      expectMessage(
        await api('DELETE', `/organizations/${orgId}/members/${orgId}`),
        404,
        'not_found',
        `no such resource: "${orgId}" must be an id starting with user_`,
      );
      expectMessage(await api('POST', `/organizations/${orgId}/members`, { user_id: 'user_abc' }), 400, 'invalid_request', 'user_id: no such user');
      // Another kind of id in its place is a client mistake, named as such.
      expectMessage(
        await api('POST', `/organizations/${orgId}/members`, { user_id: orgId }),
        400,
        'invalid_request',
        'user_id: must be an id starting with user_',
      );
    });
  });

  describe('JSON bodies', () => {
    const raw = (body: string | Buffer) =>
      s.request({
        method: 'POST',
        path: '/v1/organizations',
        headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' },
        body,
      });

    it('refuses a __proto__ member by name, at the top level and nested', async () => {
      expectMessage(await raw('{"name":"x","__proto__":{"admin":true}}'), 400, 'invalid_request', '__proto__: "__proto__" is not allowed as a member name');
      const nested = await api(
        'POST',
        '/clients',
        '{"client_name":"x","redirect_uris":["https://a.example/cb"],"jwks":{"keys":[{"kty":"EC","__proto__":{}}]}}',
      );
      expectMessage(nested, 400, 'invalid_request', 'jwks.keys[0].__proto__: "__proto__" is not allowed as a member name');
    });

    it('refuses invalid UTF-8 with 400 instead of storing U+FFFD', async () => {
      const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
      expectMessage(await raw(bytes), 400, 'invalid_request', /not valid UTF-8/);
      const overlong = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
      expectMessage(await raw(overlong), 400, 'invalid_request', /not valid UTF-8/);
      const list = (await api('GET', '/organizations?limit=100')).json().data as Array<{ name: string }>;
      assert.ok(!list.some((o) => o.name.includes('\ufffd')), 'nothing stored with a replacement character');
      // Valid multi-byte UTF-8 still works.
      const ok = await raw(Buffer.from('{"name":"café ☕"}', 'utf8'));
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.json().name, 'café ☕');
    });

    it('says what is wrong with a body that is not JSON at all', async () => {
      expectMessage(await raw('{"name":'), 400, 'invalid_request', 'the body is not valid JSON');
      expectMessage(await raw(''), 400, 'invalid_request', 'the body is empty; send a JSON object');
    });

    it('SCIM applies the same body rules with SCIM errors', async () => {
      const conn = await api('POST', `/organizations/${orgId}/directory/connections`, { name: 'SCIM' });
      assert.equal(conn.status, 201, conn.text);
      const token = (await api('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: conn.json().id })).json().token as string;
      const scim = (body: string | Buffer) =>
        s.request({ method: 'POST', path: '/scim/v2/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, body });
      const proto = await scim('{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.example","__proto__":{}}');
      assert.equal(proto.status, 400, proto.text);
      assert.equal(proto.json().scimType, 'invalidSyntax');
      assert.match(proto.json().detail, /__proto__/);
      const utf8 = await scim(Buffer.concat([Buffer.from('{"userName":"'), Buffer.from([0xff]), Buffer.from('"}')]));
      assert.equal(utf8.status, 400, utf8.text);
      assert.match(utf8.json().detail, /UTF-8/);
    });
  });

  describe('every list: {data, has_more, next_cursor}, limit 1..100 (default 20), opaque cursors', () => {
    // Each list and how to make one more item in it (at least 21 are made so the default limit shows).
    const lists: Array<{ name: string; path: () => string; make: (i: number) => Promise<void> }> = [
      { name: 'organizations', path: () => '/organizations', make: async (i) => void (await api('POST', '/organizations', { name: `L${i}` })) },
      { name: 'users', path: () => '/users', make: async (i) => void (await api('POST', '/users', { email: `l${i}@list.example` })) },
      {
        name: 'members',
        path: () => `/organizations/${orgId}/members`,
        make: async (i) => {
          const user = (await api('POST', '/users', { email: `m${i}@list.example` })).json().id as string;
          await api('POST', `/organizations/${orgId}/members`, { user_id: user });
        },
      },
      {
        name: 'platform api keys',
        path: () => '/api_keys',
        make: async (i) => void (await api('POST', '/api_keys', { name: `k${i}`, scopes: ['events:read'] })),
      },
      {
        name: 'organization api keys',
        path: () => `/organizations/${orgId}/api_keys`,
        make: async (i) => void (await api('POST', `/organizations/${orgId}/api_keys`, { name: `k${i}`, scopes: ['events:read'] })),
      },
      {
        name: 'clients',
        path: () => '/clients',
        make: async (i) => void (await api('POST', '/clients', { client_name: `c${i}`, redirect_uris: ['https://c.example/cb'] })),
      },
      {
        name: 'resource servers',
        path: () => '/resource_servers',
        make: async (i) => void (await api('POST', '/resource_servers', { name: `rs${i}`, identifier: `https://api${i}.example/`, scopes: ['read'] })),
      },
      {
        name: 'directory connections',
        path: () => `/organizations/${orgId}/directory/connections`,
        make: async (i) => void (await api('POST', `/organizations/${orgId}/directory/connections`, { name: `d${i}` })),
      },
      { name: 'events', path: () => '/events', make: async (i) => void (await api('POST', '/organizations', { name: `E${i}` })) },
      {
        name: 'webhooks',
        path: () => `/organizations/${orgId}/webhooks`,
        make: async () => {
          const r = await api('POST', `/organizations/${orgId}/webhooks`, { url: 'http://127.0.0.1:9/in' });
          assert.equal(r.status, 201, r.text);
          webhookId ??= r.json().endpoint_id as string;
        },
      },
      {
        name: 'webhook deliveries',
        path: () => `/organizations/${orgId}/webhooks/${webhookId}/deliveries`,
        make: async (i) =>
          void (await api('POST', `/organizations/${orgId}/members`, { user_id: (await api('POST', '/users', { email: `w${i}@list.example` })).json().id })),
      },
    ];

    for (const list of lists) {
      it(`${list.name}`, async () => {
        let total = ((await api('GET', `${list.path()}?limit=100`)).json().data as unknown[]).length;
        // Webhook endpoints are capped per organization: the default limit is shown where 21 fit.
        const target = list.name === 'webhooks' ? 3 : 21;
        for (let i = 0; total < target; i++, total++) await list.make(i);

        const first = await api('GET', list.path());
        assert.equal(first.status, 200, first.text);
        const body = first.json();
        assert.deepEqual(Object.keys(body).sort(), ['data', 'has_more', 'next_cursor']);
        assert.ok(Array.isArray(body.data));
        if (target > 20) {
          assert.equal(body.data.length, 20, 'default limit 20');
          assert.equal(body.has_more, true);
          assert.equal(typeof body.next_cursor, 'string');
        }

        // Walk with limit=2: every item once, has_more false and next_cursor null only at the end.
        const seen: string[] = [];
        let cursor: string | null = null;
        for (;;) {
          const r = await api('GET', `${list.path()}?limit=2${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
          assert.equal(r.status, 200, r.text);
          const p = r.json();
          assert.ok(p.data.length <= 2);
          seen.push(...p.data.map((x: Record<string, unknown>) => JSON.stringify(x.id ?? x.user_id ?? x.client_id ?? x.endpoint_id)));
          if (!p.has_more) {
            if (list.name !== 'events') assert.equal(p.next_cursor, null, 'next_cursor is null on the last page');
            break;
          }
          assert.equal(typeof p.next_cursor, 'string');
          cursor = p.next_cursor;
        }
        assert.ok(seen.length >= target, `${seen.length} items`);
        assert.equal(new Set(seen).size, seen.length, 'no item repeated');

        // The limit rule is the same everywhere.
        for (const bad of ['0', '101', 'abc', '-1', '1.5']) {
          expectMessage(await api('GET', `${list.path()}?limit=${bad}`), 400, 'invalid_request', 'limit: must be an integer from 1 to 100');
        }
        assert.equal((await api('GET', `${list.path()}?limit=100`)).status, 200);
        // A cursor that no page of this list returned is 400.
        expectError(await api('GET', `${list.path()}?after=not-a-cursor`), 400, 'invalid_request');
        expectError(await api('GET', `${list.path()}?after=${Buffer.from('other_list:x').toString('base64url')}`), 400, 'invalid_request');
      });
    }

    it('a cursor from one list is refused by another', async () => {
      const orgs = (await api('GET', '/organizations?limit=1')).json();
      assert.ok(orgs.next_cursor);
      assert.doesNotMatch(orgs.next_cursor, /^org_/, 'cursors are opaque, not ids');
      expectMessage(await api('GET', `/users?after=${orgs.next_cursor}`), 400, 'invalid_request', /^after: is not a cursor from this list/);
    });
  });
});
