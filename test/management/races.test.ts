import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

// Races that only bite with real concurrency (PostgreSQL); on SQLite they must simply pass.
describe('concurrent management writes', () => {
  let s: TestServer;
  let api: Api;
  let rx: Receiver;
  before(async () => {
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 } });
    api = v1(s, s.tenant.platformApiKey);
    rx = await startReceiver(ok);
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it('member adds racing webhook deletes never deadlock into a 500', async () => {
    for (let round = 0; round < 10; round++) {
      const org = (await api('POST', '/organizations', { name: `R${round}` })).json().id;
      const hooks = await Promise.all([1, 2, 3].map(() => api('POST', `/organizations/${org}/webhooks`, { url: rx.url })));
      const user = (await api('POST', '/users', { email: `race${round}@example.com` })).json().id;
      const results = await Promise.all([
        api('POST', `/organizations/${org}/members`, { user_id: user }),
        ...hooks.map((h) => api('DELETE', `/organizations/${org}/webhooks/${h.json().endpoint_id}`)),
      ]);
      for (const r of results) assert.ok(r.status < 500, `${r.status} ${r.text}`);
    }
  });

  it('an API key minted while its organization is deleted never outlives it', async () => {
    for (let round = 0; round < 10; round++) {
      const org = (await api('POST', '/organizations', { name: `D${round}` })).json().id;
      const [mint, del] = await Promise.all([
        api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes: ['members:read'] }),
        api('DELETE', `/organizations/${org}`),
      ]);
      assert.equal(del.status, 204);
      assert.ok(mint.status === 201 || mint.status === 404, `${mint.status} ${mint.text}`);
      if (mint.status === 201) {
        const use = await v1(s, mint.json().key)('GET', `/organizations/${org}/members`);
        assert.equal(use.status, 401, 'the key died with its organization');
      }
    }
  });

  it('concurrent key rotations leave exactly one active key per algorithm', async () => {
    const tenant = s.tenant.tenant.id;
    await Promise.all([1, 2, 3].map(() => s.server.ctx.tenants.rotateKeys(tenant, ['EdDSA'])));
    const active = await s.server.ctx.db.kysely
      .selectFrom('signing_keys')
      .select('kid')
      .where('tenant_id', '=', tenant)
      .where('alg', '=', 'EdDSA')
      .where('status', '=', 'active')
      .execute();
    assert.equal(active.length, 1);
  });
});
