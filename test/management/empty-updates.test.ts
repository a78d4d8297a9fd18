// Issue 12, item 7: an update that changes nothing (`{}`, or the current values) writes nothing —
// `updated_at` stays, no event is recorded — and answers 200 with the current resource.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

describe('/v1 updates that change nothing', () => {
  let s: TestServer;
  let api: Api;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  before(async () => {
    s = await startTestServer({ clock });
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  /** The id of the newest event in the feed (every write below is audited, so this moves on a write). */
  async function lastEventId(): Promise<string | null> {
    let cursor: string | null = null;
    let last: string | null = null;
    for (;;) {
      const r = await api('GET', `/events?limit=100${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      const page = r.json() as { data: Array<{ id: string }>; has_more: boolean; next_cursor: string };
      last = page.data.at(-1)?.id ?? last;
      if (!page.has_more) return last;
      cursor = page.next_cursor;
    }
  }

  /** Each PATCH endpoint: a resource to patch, the same values it already has, and a real change. */
  type Case = { name: string; path: () => Promise<string>; same: Record<string, unknown>; change: Record<string, unknown>; audited: boolean };
  const cases: Case[] = [
    {
      name: 'organization',
      path: async () => `/organizations/${(await api('POST', '/organizations', { name: 'Acme', slug: 'acme-noop', domain: 'acme.example' })).json().id}`,
      same: { name: 'Acme', slug: 'acme-noop', domain: 'ACME.example', brand_logo_url: null },
      change: { name: 'Acme 2' },
      audited: true,
    },
    {
      name: 'user',
      path: async () => `/users/${(await api('POST', '/users', { email: 'noop@example.com', name: 'No Op' })).json().id}`,
      same: { email: 'NoOp@Example.com', name: 'No Op' },
      change: { name: 'Some Op' },
      audited: true,
    },
    {
      name: 'member',
      path: async () => {
        const org = (await api('POST', '/organizations', { name: 'Members' })).json().id;
        const user = (await api('POST', '/users', { email: 'member-noop@example.com' })).json().id;
        assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user, role: 'member' })).status, 201);
        return `/organizations/${org}/members/${user}`;
      },
      same: { role: 'member' },
      change: { role: 'admin' },
      audited: true,
    },
    {
      name: 'directory connection',
      path: async () => {
        const org = (await api('POST', '/organizations', { name: 'Directory' })).json().id;
        const conn = (await api('POST', `/organizations/${org}/directory/connections`, { name: 'HR', group_roles: { Staff: 'member' } })).json().id;
        return `/organizations/${org}/directory/connections/${conn}`;
      },
      same: { name: 'HR', group_roles: { staff: 'member' } },
      change: { name: 'People' },
      audited: true,
    },
    {
      name: 'resource server',
      path: async () =>
        `/resource_servers/${(await api('POST', '/resource_servers', { name: 'API', identifier: 'https://api.noop.example/', scopes: ['read', 'write'] })).json().id}`,
      same: { name: 'API', identifier: 'https://api.noop.example/', scopes: ['read', 'write'], dpop_required: false },
      change: { scopes: ['read'] },
      audited: true,
    },
    {
      name: 'client',
      path: async () => `/clients/${(await api('POST', '/clients', { client_name: 'App', redirect_uris: ['https://app.example/cb'] })).json().client_id}`,
      same: { client_name: 'App', redirect_uris: ['https://app.example/cb'] },
      change: { client_name: 'App 2' },
      audited: true,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: {} and the current values change nothing; a real change does`, async () => {
      const path = await c.path();
      const before = await api('GET', path).then((r) => (r.status === 200 ? r.json() : undefined));
      const original = before ?? (await api('PATCH', path, {})).json();
      clock.advance(60_000);
      const mark = await lastEventId();

      for (const body of [{}, c.same]) {
        const r = await api('PATCH', path, body);
        assert.equal(r.status, 200, `${JSON.stringify(body)}: ${r.text}`);
        assert.deepEqual(r.json(), original, `${JSON.stringify(body)} answers the current resource unchanged`);
        assert.equal(await lastEventId(), mark, `${JSON.stringify(body)} records no event`);
      }
      if (before) assert.deepEqual((await api('GET', path)).json(), original);

      const changed = await api('PATCH', path, c.change);
      assert.equal(changed.status, 200, changed.text);
      assert.notDeepEqual(changed.json(), original);
      if ('updated_at' in original) assert.equal(changed.json().updated_at, new Date(clock.now()).toISOString(), 'a real change bumps updated_at');
      if (c.audited) assert.notEqual(await lastEventId(), mark, 'a real change is audited');
    });
  }

  it('token settings: the same values again write nothing', async () => {
    const body = { access_token_ttl_seconds: 600, refresh_token_ttl_seconds: null };
    const first = await api('PUT', '/oauth/settings', body);
    assert.equal(first.status, 200, first.text);
    const mark = await lastEventId();
    const again = await api('PUT', '/oauth/settings', body);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json(), first.json());
    assert.equal(await lastEventId(), mark, 'the same values again record no event');
    assert.equal((await api('GET', '/oauth/settings')).json().access_token_ttl_seconds, 600);
  });
});
