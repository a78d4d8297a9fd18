import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, expectScimError, GROUP, PATCH, USER } from './helpers.js';

const CAP = 1000;
const fakeId = (i: number) => `dsu_${String(i).padStart(26, '0')}`;
/** More member ids than either database binds in one statement (SQLite 32,766; PostgreSQL 65,535). */
const HUGE = Array.from({ length: 70_000 }, (_, i) => ({ value: fakeId(i) }));

describe('SCIM group members: at most 1000 per request', () => {
  let s: TestServer;
  let d: Directory;
  let alice: string;
  let bob: string;
  before(async () => {
    s = await startTestServer({ config: { bodyLimit: 4 * 1024 * 1024 } });
    d = await createDirectory(s);
    alice = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'alice@acme.example' })).json().id;
    bob = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'bob@acme.example' })).json().id;
  });
  after(() => s.close());

  const overCap = (r: Awaited<ReturnType<Directory['scim']>>) => {
    expectScimError(r, 400, 'invalidValue');
    assert.match(r.json().detail, /at most 1000 members/);
  };
  const membersOf = async (id: string) => ((await d.scim('GET', `/Groups/${id}`)).json().members ?? []).map((m: { value: string }) => m.value).sort();

  it('answers 400 invalidValue (not 500) for tens of thousands of members on POST, PUT and PATCH', async () => {
    overCap(await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Huge', members: HUGE }));
    const g = (await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Target', members: [{ value: alice }] })).json();
    overCap(await d.scim('PUT', `/Groups/${g.id}`, { schemas: [GROUP], displayName: 'Target', members: HUGE }));
    overCap(await d.scim('PATCH', `/Groups/${g.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: HUGE }] }));
    overCap(await d.scim('PATCH', `/Groups/${g.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members', value: HUGE }] }));
    overCap(await d.scim('PATCH', `/Groups/${g.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { members: HUGE } }] }));
    assert.equal((await d.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Huge"')}`)).json().totalResults, 0);
    assert.deepEqual(await membersOf(g.id), [alice], 'nothing changed');
  });

  it("counts repeats and all of a PatchOp's operations against the cap", async () => {
    const g = (await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Repeats' })).json();
    overCap(await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'R2', members: Array.from({ length: CAP + 1 }, () => ({ value: alice })) }));
    overCap(
      await d.scim('PATCH', `/Groups/${g.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'remove', path: 'members', value: Array.from({ length: CAP + 1 }, () => ({ value: alice })) }],
      }),
    );
    const half = (from: number) => Array.from({ length: 600 }, (_, i) => ({ value: fakeId(from + i) }));
    overCap(
      await d.scim('PATCH', `/Groups/${g.id}`, {
        schemas: [PATCH],
        Operations: [
          { op: 'remove', path: 'members', value: half(0) },
          { op: 'remove', path: 'members', value: half(600) },
        ],
      }),
    );
  });

  it('accepts up to the cap, duplicates included, and stores each member once', async () => {
    const dup = Array.from({ length: CAP }, (_, i) => ({ value: i % 2 ? alice : bob }));
    const c = await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Dups', members: dup });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(
      c
        .json()
        .members.map((m: { value: string }) => m.value)
        .sort(),
      [alice, bob].sort(),
    );
    const put = await d.scim('PUT', `/Groups/${c.json().id}`, { schemas: [GROUP], displayName: 'Dups', members: dup.slice(0, 3) });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(await membersOf(c.json().id), [alice, bob].sort());
    const rm = await d.scim('PATCH', `/Groups/${c.json().id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: 'members', value: Array.from({ length: CAP }, () => ({ value: alice })) }],
    });
    assert.equal(rm.status, 200, rm.text);
    assert.deepEqual(await membersOf(c.json().id), [bob]);
    const add = await d.scim('PATCH', `/Groups/${c.json().id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'add', path: 'members', value: [{ value: alice }, { value: alice }] },
        { op: 'add', path: 'members', value: [{ value: alice }] },
      ],
    });
    assert.equal(add.status, 200, add.text);
    assert.deepEqual(await membersOf(c.json().id), [alice, bob].sort());
    // an unknown id among many is still reported as such
    expectScimError(
      await d.scim('PATCH', `/Groups/${c.json().id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'add', path: 'members', value: [...dup.slice(0, 900), { value: fakeId(1) }] }],
      }),
      400,
      'invalidValue',
    );
  });

  it('adds, lists and removes more members than one statement chunk (500) holds', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 520; i++) ids.push((await d.scim('POST', '/Users', { schemas: [USER], userName: `many${i}@acme.example` })).json().id);
    const c = await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Many', members: ids.map((value) => ({ value })) });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.json().members.length, 520);
    const listed = await d.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Many"')}`);
    assert.equal(listed.json().Resources[0].members.length, 520);
    const put = await d.scim('PUT', `/Groups/${c.json().id}`, { schemas: [GROUP], displayName: 'Many', members: [{ value: ids[0] }] });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(await membersOf(c.json().id), [ids[0]]);
    const back = await d.scim('PATCH', `/Groups/${c.json().id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }],
    });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.json().members.length, 520);
    const rm = await d.scim('PATCH', `/Groups/${c.json().id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] });
    assert.equal(rm.status, 200, rm.text);
    assert.deepEqual(await membersOf(c.json().id), []);
  });

  it('advertises the cap on the Group resource type', async () => {
    const r = await d.scim('GET', '/ResourceTypes/Group');
    assert.match(r.json().description, /At most 1000 member values per request/);
  });
});
