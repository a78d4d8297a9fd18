import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, expectScimError, GROUP, PATCH, scimClient, USER } from './helpers.js';

describe('SCIM errors: filter injection and malformed input', () => {
  let s: TestServer;
  let d: Directory;
  let userId: string;
  let groupId: string;
  before(async () => {
    s = await startTestServer({ config: { bodyLimit: 64 * 1024 } });
    d = await createDirectory(s);
    userId = (
      await d.scim('POST', '/Users', {
        schemas: [USER],
        userName: 'alice@acme.example',
        emails: [{ value: 'alice@acme.example', type: 'work', primary: true }],
      })
    ).json().id;
    await d.scim('POST', '/Users', { schemas: [USER], userName: 'bob@acme.example' });
    groupId = (await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Staff' })).json().id;
  });
  after(() => s.close());

  const filters: Array<[string, string]> = [
    ['or-true injection', 'userName eq "a" or "1" eq "1"'],
    ['SQL in a string stays a value (no match), but a quote break is a syntax error', `userName eq "a" ' or 1=1 --`],
    ['unbalanced parentheses', '(userName eq "a"'],
    ['closing parenthesis', 'userName eq "a")'],
    ['unknown attribute', 'nickName eq "x"'],
    ['password', 'password eq "secret"'],
    ['deep nesting', `${'('.repeat(40)}userName eq "a"${')'.repeat(40)}`],
    ['too many comparisons', Array.from({ length: 60 }, (_, i) => `userName eq "u${i}"`).join(' or ')],
    ['unknown operator', 'userName xx "a"'],
    ['missing value', 'userName eq'],
    ['wrong value type', 'active eq "yes"'],
    ['operator not valid for booleans', 'active gt true'],
    ['bad date', 'meta.created gt "yesterday"'],
    ['unterminated string', 'userName eq "abc'],
    ['semicolon', 'userName eq "a"; drop table users'],
    ['empty', ' '],
    ['huge', `userName eq "${'a'.repeat(2000)}"`],
  ];
  for (const [name, filter] of filters) {
    it(`answers 400 invalidFilter: ${name}`, async () => {
      expectScimError(await d.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    });
  }

  it('keeps SQL metacharacters inside a string as data', async () => {
    for (const v of [`a' or '1'='1`, 'a%', '_', 'x\\"; drop table users; --']) {
      const r = await d.scim('GET', `/Users?filter=${encodeURIComponent(`userName co ${JSON.stringify(v)}`)}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().totalResults, 0, v);
    }
  });

  // Escaped in the filter text, so the request-wide check of raw text never sees them; PostgreSQL
  // refuses NUL and neither database compares lone surrogates faithfully.
  const unstorable = ['a\\u0000b', '\\u0000', '\\ud800', 'x\\udc00y'];

  it('answers 400 invalidFilter when an escaped filter string holds a NUL or an unpaired surrogate', async () => {
    for (const lit of unstorable) {
      for (const filter of [`userName eq "${lit}"`, `displayName co "${lit}"`, `externalId sw "${lit}"`, `emails[type eq "work" and value ew "${lit}"]`]) {
        expectScimError(await d.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
      }
      expectScimError(await d.scim('GET', `/Groups?filter=${encodeURIComponent(`members.value eq "${lit}"`)}`), 400, 'invalidFilter');
      expectScimError(await d.scim('GET', `/Groups?filter=${encodeURIComponent(`displayName eq "${lit}"`)}`), 400, 'invalidFilter');
      const search = { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `userName eq "${lit}"` };
      expectScimError(await d.scim('POST', '/Users/.search', search), 400, 'invalidFilter');
    }
    // a raw NUL in the query string is refused as a filter too
    expectScimError(await d.scim('GET', '/Users?filter=userName%20eq%20%22%00%22'), 400, 'invalidFilter');
    const ok = await d.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "alice\\u0040acme.example"')}`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().totalResults, 1, 'ordinary escapes still work');
  });

  it('answers 400 invalidPath for a PATCH path filter holding an escaped NUL or unpaired surrogate', async () => {
    for (const lit of unstorable) {
      for (const op of ['add', 'replace', 'remove']) {
        const g = { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${lit}"]` }] };
        expectScimError(await d.scim('PATCH', `/Groups/${groupId}`, g), 400, 'invalidPath');
        const u = { schemas: [PATCH], Operations: [{ op, path: `emails[type eq "${lit}"].value`, ...(op === 'remove' ? {} : { value: 'x@acme.example' }) }] };
        expectScimError(await d.scim('PATCH', `/Users/${userId}`, u), 400, 'invalidPath');
      }
    }
  });

  it('answers a SCIM 400 for bodies holding a NUL or an unpaired surrogate', async () => {
    const bodies: Array<[string, string, string]> = [
      ['POST', '/Users', `{"schemas":["${USER}"],"userName":"a\\u0000b@acme.example"}`],
      ['POST', '/Users', `{"schemas":["${USER}"],"userName":"a\\ud800@acme.example"}`],
      ['POST', '/Users', `{"schemas":["${USER}"],"userName":"key@acme.example","x\\u0000":1}`],
      ['POST', '/Groups', `{"schemas":["${GROUP}"],"displayName":"G\\u0000"}`],
      ['PATCH', `/Users/${userId}`, `{"schemas":["${PATCH}"],"Operations":[{"op":"replace","path":"title","value":"\\udfff"}]}`],
      ['PATCH', `/Groups/${groupId}`, `{"schemas":["${PATCH}"],"Operations":[{"op":"add","path":"members","value":[{"value":"dsu_\\u0000"}]}]}`],
      ['PUT', `/Groups/${groupId}`, `{"schemas":["${GROUP}"],"displayName":"Staff","externalId":"\\u0000"}`],
    ];
    for (const [method, path, body] of bodies) {
      const r = await d.scim(method, path, body);
      const scimType = r.json().scimType;
      assert.ok(scimType === 'invalidValue' || scimType === 'invalidSyntax', `${method} ${path}: ${r.text}`);
      expectScimError(r, 400, scimType);
    }
    expectScimError(
      await d.scim('POST', '/Users', `{"schemas":["${USER}"],"userName":"deep@acme.example","x":${'['.repeat(100)}${']'.repeat(100)}}`),
      400,
      'invalidSyntax',
    );
    assert.equal((await d.scim('GET', `/Groups/${groupId}`)).json().displayName, 'Staff');
  });

  it('answers 400 invalidFilter for a Group filter on a User attribute', async () => {
    expectScimError(await d.scim('GET', `/Groups?filter=${encodeURIComponent('userName eq "a"')}`), 400, 'invalidFilter');
  });

  it('answers 400 invalidSyntax for a body that is not JSON or not an object', async () => {
    expectScimError(await d.scim('POST', '/Users', '{"userName": '), 400, 'invalidSyntax');
    expectScimError(await d.scim('POST', '/Users', 'null'), 400, 'invalidSyntax');
    expectScimError(await d.scim('POST', '/Groups', '[]'), 400, 'invalidSyntax');
    expectScimError(await d.scim('POST', '/Users', ''), 400, 'invalidSyntax');
    expectScimError(await d.scim('PATCH', `/Users/${userId}`, '"text"'), 400, 'invalidSyntax');
    expectScimError(await d.scim('POST', '/Users'), 400, 'invalidSyntax');
  });

  it('answers 400 invalidSyntax for a PatchOp without its schema or with a bad op', async () => {
    expectScimError(await d.scim('PATCH', `/Users/${userId}`, { Operations: [{ op: 'replace', path: 'title', value: 'x' }] }), 400, 'invalidSyntax');
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'frobnicate', path: 'title', value: 'x' }] }),
      400,
      'invalidSyntax',
    );
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'merge', path: 'displayName', value: 'x' }] }),
      400,
      'invalidSyntax',
    );
  });

  it('answers 400 invalidValue for wrong types and missing required attributes', async () => {
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], userName: 42 }), 400, 'invalidValue');
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], displayName: 'no userName' }), 400, 'invalidValue');
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], userName: 'no-email-anywhere' }), 400, 'invalidValue');
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: 7 }] }),
      400,
      'invalidValue',
    );
    expectScimError(
      await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'G', members: [{ value: 'dsu_00000000000000000000000000' }] }),
      400,
      'invalidValue',
    );
    expectScimError(await d.scim('GET', '/Users?count=abc'), 400, 'invalidValue');
    expectScimError(await d.scim('GET', '/Users?sortBy=password'), 400, 'invalidValue');
  });

  it('answers 400 invalidValue for over-long indexed strings', async () => {
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], userName: `${'a'.repeat(600)}@acme.example` }), 400, 'invalidValue');
    expectScimError(await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'g'.repeat(600) }), 400, 'invalidValue');
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'g'.repeat(600) }] }),
      400,
      'invalidValue',
    );
  });

  it('accepts application/scim+json with a charset and plain application/json', async () => {
    const a = await d.scim('POST', '/Users', { schemas: [USER], userName: 'charset@acme.example' }, { 'content-type': 'application/scim+json; charset=utf-8' });
    assert.equal(a.status, 201, a.text);
    const b = await d.scim('POST', '/Users', { schemas: [USER], userName: 'json@acme.example' }, { 'content-type': 'application/json' });
    assert.equal(b.status, 201, b.text);
  });

  it('answers 400 invalidPath for an unknown or malformed path', async () => {
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'bogus', value: 'x' }] }),
      400,
      'invalidPath',
    );
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'bogus', value: 'x' }] }),
      400,
      'invalidPath',
    );
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members[display co "x"]' }] }),
      400,
      'invalidPath',
    );
  });

  it('answers 400 noTarget when a value filter matches nothing or remove has no path', async () => {
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'emails[type eq "home"].value', value: 'x@y.z' }] }),
      400,
      'noTarget',
    );
    expectScimError(await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'remove' }] }), 400, 'noTarget');
    expectScimError(await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'remove' }] }), 400, 'noTarget');
  });

  it('answers 400 mutability for a change of id', async () => {
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'id', value: 'dsu_x' }] }),
      400,
      'mutability',
    );
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'id', value: 'dsg_x' }] }),
      400,
      'mutability',
    );
    expectScimError(
      await d.scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { id: 'dsg_other', displayName: 'x' } }] }),
      400,
      'mutability',
    );
  });

  it('answers 409 uniqueness for a duplicate userName (any case) or group name', async () => {
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], userName: 'ALICE@acme.example' }), 409, 'uniqueness');
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userName', value: 'bob@acme.example' }] }),
      409,
      'uniqueness',
    );
    expectScimError(await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'staff' }), 409, 'uniqueness');
  });

  it('answers 404 for unknown ids, malformed ids and unknown endpoints', async () => {
    expectScimError(await d.scim('GET', '/Users/dsu_00000000000000000000000000'), 404);
    expectScimError(await d.scim('GET', '/Users/../../v1/organizations'), 404);
    expectScimError(await d.scim('DELETE', '/Groups/not-an-id'), 404);
    expectScimError(await d.scim('GET', '/Unknown'), 404);
    expectScimError(await d.scim('GET', '/Schemas/urn:nope'), 404);
    expectScimError(await scimClient(s, d.token, 'unknown.localhost')('GET', '/Users'), 404);
  });

  it('answers 412 when If-Match does not match the ETag', async () => {
    const r = await d.scim('GET', `/Users/${userId}`);
    const etag = String(r.headers.etag);
    expectScimError(
      await d.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'x' }] }, { 'if-match': 'W/"999"' }),
      412,
    );
    expectScimError(await d.scim('DELETE', `/Groups/${groupId}`, undefined, { 'if-match': 'W/"999"' }), 412);
    const ok = await d.scim(
      'PATCH',
      `/Users/${userId}`,
      { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'x' }] },
      { 'if-match': etag },
    );
    assert.equal(ok.status, 200, ok.text);
    assert.notEqual(ok.headers.etag, etag);
    expectScimError(await d.scim('PUT', `/Users/${userId}`, { schemas: [USER], userName: 'alice@acme.example' }, { 'if-match': etag }), 412);
  });

  it('answers 413 for an oversized payload', async () => {
    expectScimError(await d.scim('POST', '/Users', { schemas: [USER], userName: 'big@acme.example', title: 'x'.repeat(100 * 1024) }), 413);
  });

  it('answers 415 for a non-JSON content type and 501 for /Bulk', async () => {
    expectScimError(await d.scim('POST', '/Users', 'userName=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    expectScimError(await d.scim('POST', '/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }), 501);
  });
});
