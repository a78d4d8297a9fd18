import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, eventsOf, GROUP, membersOf, PATCH, USER } from './helpers.js';

describe('SCIM under concurrent requests', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('creates a userName once when an IdP retries in parallel; the others get 409 uniqueness', async () => {
    const d = await createDirectory(s);
    const results = await Promise.all(Array.from({ length: 8 }, () => d.scim('POST', '/Users', { schemas: [USER], userName: 'race@acme.example' })));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409], results.map((r) => r.text).join('\n'));
    for (const r of results.filter((x) => x.status === 409)) assert.equal(r.json().scimType, 'uniqueness');
    assert.equal((await membersOf(d.api, d.orgId)).length, 1);
    assert.equal((await eventsOf(d.api, d.orgId, 'member.added')).length, 1);
  });

  it('applies parallel PATCHes of one user and one group without losing any', async () => {
    const d = await createDirectory(s);
    const users: string[] = [];
    for (let i = 0; i < 6; i++) users.push((await d.scim('POST', '/Users', { schemas: [USER], userName: `p${i}@acme.example` })).json().id);
    const gid = (await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Parallel' })).json().id;
    const adds = await Promise.all(
      users.map((id) => d.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] })),
    );
    assert.ok(
      adds.every((r) => r.status === 200),
      adds.map((r) => r.text).join('\n'),
    );
    assert.equal((await d.scim('GET', `/Groups/${gid}`)).json().members.length, 6);
    const titles = await Promise.all(
      ['a', 'b', 'c', 'd'].map((t) => d.scim('PATCH', `/Users/${users[0]}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'title', value: t }] })),
    );
    assert.ok(
      titles.every((r) => r.status === 200),
      titles.map((r) => r.text).join('\n'),
    );
    assert.equal((await d.scim('GET', `/Users/${users[0]}`)).headers.etag, 'W/"5"', 'writers of one resource queue; none is lost');
  });

  it('counts the rate limit exactly under parallel requests', async () => {
    const d = await createDirectory(s, { rate_limit_per_minute: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => d.scim('GET', '/ServiceProviderConfig')));
    assert.equal(results.filter((r) => r.status === 200).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 7);
  });
});
