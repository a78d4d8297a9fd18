import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { repos } from '../../src/storage/repos/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1, type Api } from '../helpers/v1.js';
import { finished } from './helpers.js';

// Finished exports expire (KEYHALL_EXPORT_TTL_SECONDS, 24 h by default), measured on the injected clock.
describe('the expiry of exports', () => {
  const clock = new ManualClock();
  let s: TestServer;
  let api: Api;
  before(async () => {
    s = await startTestServer({ clock });
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  it('an export answers 404 once its time is up, and the sweep deletes its row', async () => {
    const started = await api('POST', '/exports', { include_secrets: false });
    assert.equal(started.status, 202, started.text);
    const id = started.json().id as string;
    assert.equal((await finished(api, `/exports/${id}`)).status, 'succeeded');
    clock.advance(24 * 3600_000 - 1000);
    assert.equal((await api('GET', `/exports/${id}/download`)).status, 200);
    clock.advance(1000);
    expectError(await api('GET', `/exports/${id}`), 404, 'not_found');
    expectError(await api('GET', `/exports/${id}/download`), 404, 'not_found');
    const r = repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect);
    assert.ok(await r.transferJobs.find(s.tenant.tenant.id, 'export', id), 'kept until the sweep');
    await s.server.ctx.management.transfers.sweepExpired();
    assert.equal(await r.transferJobs.find(s.tenant.tenant.id, 'export', id), undefined);
  });
});
