import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, ENTERPRISE, GROUP, USER } from './helpers.js';

describe('SCIM discovery, filters, paging, sorting and projection', () => {
  let s: TestServer;
  let d: Directory;
  const ids: string[] = [];
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s);
    for (const [i, name] of ['carol', 'alice', 'erin', 'bob', 'dave'].entries()) {
      const r = await d.scim('POST', '/Users', {
        schemas: [USER, ENTERPRISE],
        userName: `${name}@acme.example`,
        externalId: `ext-${i}`,
        displayName: name.toUpperCase(),
        name: { givenName: name, familyName: 'Tester' },
        active: name !== 'erin',
        [ENTERPRISE]: { department: 'R&D', employeeNumber: String(i) },
      });
      assert.equal(r.status, 201, r.text);
      ids.push(r.json().id);
    }
  });
  after(() => s.close());

  const list = async (query: string) => {
    const r = await d.scim('GET', `/Users?${query}`);
    assert.equal(r.status, 200, r.text);
    return r.json();
  };
  const names = (body: { Resources: Array<{ userName: string }> }) => body.Resources.map((u) => u.userName.split('@')[0]);
  const f = (filter: string) => `filter=${encodeURIComponent(filter)}`;

  it('serves ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const spc = (await d.scim('GET', '/ServiceProviderConfig')).json();
    assert.equal(spc.patch.supported, true);
    assert.equal(spc.bulk.supported, false);
    assert.deepEqual(spc.filter, { supported: true, maxResults: 200 });
    assert.equal(spc.sort.supported, true);
    assert.equal(spc.etag.supported, true);
    assert.equal(spc.authenticationSchemes[0].type, 'oauthbearertoken');
    const types = (await d.scim('GET', '/ResourceTypes')).json();
    assert.deepEqual(
      types.Resources.map((t: { id: string }) => t.id),
      ['User', 'Group'],
    );
    assert.equal((await d.scim('GET', '/ResourceTypes/Group')).json().endpoint, '/Groups');
    const schemas = (await d.scim('GET', '/Schemas')).json();
    assert.deepEqual(
      schemas.Resources.map((x: { id: string }) => x.id),
      [USER, ENTERPRISE, GROUP],
    );
    const user = (await d.scim('GET', `/Schemas/${USER}`)).json();
    assert.ok(user.attributes.some((a: { name: string }) => a.name === 'userName'));
  });

  it('filters with eq/ne/co/sw/ew/pr, and/or/not, case-insensitively on userName', async () => {
    assert.deepEqual(names(await list(f('userName sw "A"'))), ['alice']);
    assert.deepEqual(names(await list(`${f('userName ew "@ACME.EXAMPLE" and not (active eq true)')}`)), ['erin']);
    assert.deepEqual(names(await list(`${f('displayName eq "bob" or externalId eq "ext-0"')}&sortBy=userName`)), ['bob', 'carol']);
    assert.equal((await list(f('externalId eq "EXT-0"'))).totalResults, 0, 'externalId is case-exact');
    assert.equal((await list(f('name.familyName co "test" and (name.givenName eq "dave" or name.givenName eq "alice")'))).totalResults, 2);
    assert.equal((await list(f('displayName pr and active eq false'))).totalResults, 1);
    assert.equal((await list(f('externalId pr'))).totalResults, 5);
    assert.equal((await list(f('userName ne "alice@acme.example"'))).totalResults, 4);
    assert.equal((await list(f('meta.created gt "2000-01-01T00:00:00Z"'))).totalResults, 5);
    assert.equal((await list(f(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@acme.example"`))).totalResults, 1);
    assert.equal((await list(f('userName co "%"'))).totalResults, 0);
    // not() of a group keeps its meaning (De Morgan), and nested groups parse.
    assert.deepEqual(names(await list(`${f('not (userName sw "a" or userName sw "b")')}&sortBy=userName`)), ['carol', 'dave', 'erin']);
    assert.deepEqual(names(await list(`${f('active eq true and (userName sw "a" or (userName sw "d" and displayName eq "dave"))')}&sortBy=userName`)), [
      'alice',
      'dave',
    ]);
  });

  it('pages per RFC 7644: startIndex<1 is 1, negative count is 0, huge count is capped, past the end is empty', async () => {
    const first = await list('startIndex=1&count=2&sortBy=userName');
    assert.deepEqual(names(first), ['alice', 'bob']);
    assert.equal(first.totalResults, 5);
    assert.equal(first.itemsPerPage, 2);
    assert.deepEqual(names(await list('startIndex=3&count=2&sortBy=userName')), ['carol', 'dave']);
    const zero = await list('startIndex=0&count=1&sortBy=userName');
    assert.equal(zero.startIndex, 1);
    assert.deepEqual(names(zero), ['alice']);
    const negative = await list('count=-5');
    assert.equal(negative.totalResults, 5);
    assert.deepEqual(negative.Resources, []);
    assert.equal(negative.itemsPerPage, 0);
    assert.equal((await list('count=100000')).Resources.length, 5);
    const past = await list('startIndex=50');
    assert.equal(past.totalResults, 5);
    assert.deepEqual(past.Resources, []);
  });

  it('sorts by userName, displayName and meta.created in both orders', async () => {
    assert.deepEqual(names(await list('sortBy=userName&sortOrder=descending')), ['erin', 'dave', 'carol', 'bob', 'alice']);
    assert.deepEqual(names(await list('sortBy=meta.created')), ['carol', 'alice', 'erin', 'bob', 'dave']);
    assert.deepEqual(names(await list('sortBy=displayName&sortOrder=ascending')), ['alice', 'bob', 'carol', 'dave', 'erin']);
  });

  it('lists groups with their members, sorted and paged, and without members when asked', async () => {
    for (const [name, members] of [
      ['Zeta', [ids[0], ids[1]]],
      ['Alpha', [ids[2]]],
      ['Mid', []],
    ] as const) {
      assert.equal((await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: name, members: members.map((value) => ({ value })) })).status, 201);
    }
    const all = (await d.scim('GET', '/Groups?sortBy=displayName')).json();
    assert.equal(all.totalResults, 3);
    assert.deepEqual(
      all.Resources.map((g: { displayName: string }) => g.displayName),
      ['Alpha', 'Mid', 'Zeta'],
    );
    assert.deepEqual(
      all.Resources.map((g: { members: unknown[] }) => g.members.length),
      [1, 0, 2],
    );
    assert.deepEqual(all.Resources[2].members.map((m: { value: string }) => m.value).sort(), [ids[0], ids[1]].sort());
    const page = (await d.scim('GET', '/Groups?sortBy=displayName&sortOrder=descending&startIndex=2&count=1&attributes=displayName')).json();
    assert.deepEqual(page.Resources, [{ schemas: [GROUP], id: page.Resources[0].id, displayName: 'Mid' }]);
    const member = (
      await d.scim('GET', `/Groups?filter=${encodeURIComponent(`members.value eq "${ids[2]}" or displayName sw "z"`)}&sortBy=displayName`)
    ).json();
    assert.deepEqual(
      member.Resources.map((g: { displayName: string }) => g.displayName),
      ['Alpha', 'Zeta'],
    );
    assert.equal((await d.scim('GET', `/Groups?filter=${encodeURIComponent('not (members pr)')}`)).json().Resources[0].displayName, 'Mid');
  });

  it('searches with POST /.search (RFC 7644 §3.4.3) like the GET query', async () => {
    const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
    const r = await d.scim('POST', '/Users/.search', {
      schemas: [SEARCH],
      filter: 'userName sw "b" or userName sw "c"',
      sortBy: 'userName',
      startIndex: 1,
      count: 1,
      attributes: ['userName'],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().totalResults, 2);
    assert.deepEqual(r.json().Resources, [{ schemas: [USER, ENTERPRISE], id: ids[3], userName: 'bob@acme.example' }]);
    const g = await d.scim('POST', '/Groups/.search', { schemas: [SEARCH], excludedAttributes: ['members'] });
    assert.equal(g.status, 200, g.text);
    for (const [body, scimType] of [
      [{ filter: 'userName pr' }, 'invalidSyntax'],
      [{ schemas: [SEARCH], filter: 'userName eq' }, 'invalidFilter'],
      [{ schemas: [SEARCH], attributes: 'userName' }, 'invalidValue'],
      [{ schemas: [SEARCH], count: 'ten' }, 'invalidValue'],
    ] as const) {
      const bad = await d.scim('POST', '/Users/.search', body);
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.json().scimType, scimType);
    }
  });

  it('answers 304 to If-None-Match with the current ETag', async () => {
    const r = await d.scim('GET', `/Users/${ids[1]}`);
    const notModified = await d.scim('GET', `/Users/${ids[1]}`, undefined, { 'if-none-match': String(r.headers.etag) });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
    assert.equal((await d.scim('GET', `/Users/${ids[1]}`, undefined, { 'if-none-match': 'W/"0"' })).status, 200);
  });

  it('projects attributes and excludedAttributes (id and schemas always returned)', async () => {
    const only = await list(`${f('userName eq "bob@acme.example"')}&attributes=userName,name.givenName,${ENTERPRISE}:department`);
    assert.deepEqual(only.Resources[0], {
      schemas: [USER, ENTERPRISE],
      id: ids[3],
      userName: 'bob@acme.example',
      name: { givenName: 'bob' },
      [ENTERPRISE]: { department: 'R&D' },
    });
    const without = await list(`${f('userName eq "bob@acme.example"')}&excludedAttributes=name,meta,${ENTERPRISE}`);
    const u = without.Resources[0];
    assert.equal(u.name, undefined);
    assert.equal(u.meta, undefined);
    assert.equal(u[ENTERPRISE], undefined);
    assert.equal(u.userName, 'bob@acme.example');
    const single = await d.scim('GET', `/Users/${ids[0]}?attributes=displayName`);
    assert.deepEqual(single.json(), { schemas: [USER, ENTERPRISE], id: ids[0], displayName: 'CAROL' });
  });
});

describe('SCIM filters: co/sw/ew on case-exact attributes compare case-sensitively on both databases', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s);
    for (const [i, externalId] of ['Ext-A1', 'ext-b2', 'naïve-😀ß', '100%_x'].entries()) {
      const r = await d.scim('POST', '/Users', { schemas: [USER], userName: `u${i}@acme.example`, externalId });
      assert.equal(r.status, 201, r.text);
    }
    for (const externalId of ['Grp-One', 'grp-two']) {
      const r = await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: externalId, externalId });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(() => s.close());

  const matches = async (resource: 'Users' | 'Groups', filter: string) => {
    const r = await d.scim('GET', `/${resource}?filter=${encodeURIComponent(filter)}`);
    assert.equal(r.status, 200, r.text);
    return r
      .json()
      .Resources.map((x: { externalId: string }) => x.externalId)
      .sort();
  };

  it('matches externalId and id by exact case', async () => {
    assert.deepEqual(await matches('Users', 'externalId sw "Ext"'), ['Ext-A1']);
    assert.deepEqual(await matches('Users', 'externalId sw "ext"'), ['ext-b2']);
    assert.deepEqual(await matches('Users', 'externalId sw "EXT"'), []);
    assert.deepEqual(await matches('Users', 'externalId ew "a1"'), []);
    assert.deepEqual(await matches('Users', 'externalId ew "A1"'), ['Ext-A1']);
    assert.deepEqual(await matches('Users', 'externalId co "XT"'), []);
    assert.deepEqual(await matches('Users', 'externalId co "t-A"'), ['Ext-A1']);
    assert.deepEqual(await matches('Users', 'externalId co "t-a"'), []);
    assert.deepEqual(await matches('Users', 'not (externalId co "T-A")'), ['100%_x', 'Ext-A1', 'ext-b2', 'naïve-😀ß']);
    assert.deepEqual(await matches('Groups', 'externalId sw "grp"'), ['grp-two']);
    assert.deepEqual(await matches('Groups', 'externalId ew "ONE"'), []);
    assert.equal((await matches('Users', 'id sw "DSU_"')).length, 0);
    assert.equal((await matches('Users', 'id sw "dsu_"')).length, 4);
    assert.equal((await matches('Groups', 'id co "SG_"')).length, 0);
    assert.equal((await matches('Groups', 'id co "sg_"')).length, 2);
  });

  it('keeps LIKE metacharacters literal, counts characters not bytes, and matches everything with ""', async () => {
    assert.deepEqual(await matches('Users', 'externalId co "%_"'), ['100%_x']);
    assert.deepEqual(await matches('Users', 'externalId co "_"'), ['100%_x']);
    assert.deepEqual(await matches('Users', 'externalId sw "1%"'), []);
    assert.deepEqual(await matches('Users', 'externalId sw "naïve"'), ['naïve-😀ß']);
    assert.deepEqual(await matches('Users', 'externalId sw "NAÏVE"'), []);
    assert.deepEqual(await matches('Users', 'externalId ew "😀ß"'), ['naïve-😀ß']);
    assert.deepEqual(await matches('Users', 'externalId ew "-😀ß"'), ['naïve-😀ß']);
    assert.deepEqual(await matches('Users', 'externalId ew "naïve-😀ß-longer-than-the-value"'), []);
    assert.deepEqual(await matches('Users', 'externalId co "😀"'), ['naïve-😀ß']);
    assert.equal((await matches('Users', 'externalId sw ""')).length, 4);
    assert.equal((await matches('Users', 'externalId ew ""')).length, 4);
    // case-insensitive attributes still ignore case
    assert.equal((await matches('Users', 'userName sw "U0@"')).length, 1);
  });
});
