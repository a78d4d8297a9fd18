import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { onPostgres } from '../helpers/db.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { loopbackResolver, startVaultBed, VAULT_CONFIG, type VaultBed } from './helpers.js';

const PARALLEL = 20;

/** Near expiry, concurrent retrievals refresh once (compare-and-set on the account's version). */
describe('refresh once under concurrent retrievals', () => {
  const clock = new ManualClock();
  let bed: VaultBed;
  let second: TestServer | undefined;
  before(async () => {
    bed = await startVaultBed({ clock });
    if (onPostgres) second = await startTestServer({ clock, egressResolver: loopbackResolver, config: VAULT_CONFIG, shareDatabaseWith: bed.s });
  });
  after(async () => {
    await second?.close();
    await bed.s.close();
  });

  const retrieve = (port: number, accountId: string) =>
    request(port, {
      method: 'POST',
      host: bed.s.tenant.tenant.host,
      path: `/v1/organizations/${bed.orgId}/connect/accounts/${accountId}/token`,
      headers: { authorization: `Bearer ${bed.s.tenant.platformApiKey}` },
    });

  async function connectedNearExpiry(name: string): Promise<{ accountId: string; before: string }> {
    const u = await bed.createUserPair(name);
    const accountId = await bed.connect(u.email, u.upstreamEmail);
    const before = (await retrieve(bed.s.port, accountId)).json().access_token as string;
    clock.advance(570_000);
    return { accountId, before };
  }

  async function expectOneRefresh(ports: number[], name: string) {
    const { accountId, before } = await connectedNearExpiry(name);
    const refreshesBefore = await bed.upstreamRefreshCount();
    const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => retrieve(ports[i % ports.length]!, accountId)));
    for (const r of answers) assert.equal(r.status, 200, r.text);
    const tokens = new Set(answers.map((r) => r.json().access_token as string));
    assert.equal(tokens.size, 1, 'every caller got the one refreshed token');
    assert.ok(!tokens.has(before));
    assert.equal((await bed.upstreamRefreshCount()) - refreshesBefore, 1, 'exactly one upstream refresh');
    const events = (await bed.api('GET', `/events?types=connected_account.token_retrieved&organization_id=${bed.orgId}&limit=100`))
      .json()
      .data.filter((e: { data: { account_id: string } }) => e.data.account_id === accountId);
    assert.equal(events.length, PARALLEL + 1, 'every retrieval audited');
    assert.equal(events.filter((e: { data: { refreshed: boolean } }) => e.data.refreshed).length, 1);
  }

  it(`${PARALLEL} parallel retrievals of a token near expiry cause exactly one upstream refresh`, async () => {
    await expectOneRefresh([bed.s.port], 'one');
  });

  it(
    `${PARALLEL} parallel retrievals across two instances cause exactly one upstream refresh (PostgreSQL)`,
    { skip: !onPostgres && 'needs two instances on one PostgreSQL database' },
    async () => {
      await expectOneRefresh([bed.s.port, second!.port], 'two');
    },
  );
});
