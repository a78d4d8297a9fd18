/**
 * Every SCIM answer that is not a success is in the SCIM error schema (RFC 7644 §3.12):
 * `schemas: [Error]`, `status` as a string equal to the HTTP status, `scimType` where one applies,
 * served as application/scim+json, whatever the input: over-long ids and paths, bad JSON, wrong
 * content types, oversized bodies, unknown routes and methods, bad percent-encoding, failed
 * authentication. The cases go through raw HTTP, so nothing the client library does hides them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, ERROR, USER } from './helpers.js';

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** No token, or this Authorization header instead of the directory's token. */
  authorization?: string | null;
  status: number;
  scimType?: string;
}

const BODY_LIMIT = 64 * 1024;
const user = JSON.stringify({ schemas: [USER], userName: 'sweep@acme.example' });

describe('SCIM answers every failure in the SCIM error schema', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer({ config: { bodyLimit: BODY_LIMIT } });
    d = await createDirectory(s);
  });
  after(() => s.close());

  const long = (n: number) => 'a'.repeat(n);
  const cases: Case[] = [
    { name: 'a 3,000-character user id', method: 'GET', path: `/Users/${long(3000)}`, status: 404 },
    { name: 'a 3,000-character group id', method: 'GET', path: `/Groups/${long(3000)}`, status: 404 },
    { name: 'a 6,000-character id, deleted', method: 'DELETE', path: `/Users/${long(6000)}`, status: 404 },
    { name: 'a 3,000-character id, replaced', method: 'PUT', path: `/Users/${long(3000)}`, body: user, status: 404 },
    { name: 'a 3,000-character resource type', method: 'GET', path: `/ResourceTypes/${long(3000)}`, status: 404 },
    { name: 'a 3,000-character schema id', method: 'GET', path: `/Schemas/${long(3000)}`, status: 404 },
    { name: 'a 20,000-character id (refused by the HTTP parser)', method: 'GET', path: `/Users/${long(20_000)}`, status: 431 },
    { name: 'a 3,000-character unknown endpoint', method: 'GET', path: `/${long(3000)}`, status: 404 },
    { name: 'an unknown endpoint', method: 'GET', path: '/Nope', status: 404 },
    { name: 'the root', method: 'GET', path: '', status: 404 },
    { name: 'the root with a slash', method: 'GET', path: '/', status: 404 },
    { name: 'below a resource', method: 'GET', path: '/Users/abc/def', status: 404 },
    { name: 'a trailing slash on a resource', method: 'GET', path: '/Users/abc/', status: 404 },
    { name: 'bad percent-encoding in the id', method: 'GET', path: '/Users/%E0%A4%A', status: 400 },
    { name: 'an encoded NUL in the id', method: 'GET', path: '/Users/a%00b', status: 400 },
    { name: 'a wrong method on a collection', method: 'DELETE', path: '/Users', status: 405 },
    { name: 'a wrong method on discovery', method: 'PUT', path: '/ServiceProviderConfig', body: '{}', status: 405 },
    { name: 'OPTIONS', method: 'OPTIONS', path: '/Users', status: 405 },
    { name: 'an unknown method', method: 'PROPFIND', path: '/Users', status: 405 },
    { name: 'bad JSON', method: 'POST', path: '/Users', body: '{"schemas": [', status: 400, scimType: 'invalidSyntax' },
    { name: 'an empty body', method: 'POST', path: '/Users', body: '', status: 400, scimType: 'invalidSyntax' },
    { name: 'a JSON array', method: 'POST', path: '/Users', body: '[1]', status: 400, scimType: 'invalidSyntax' },
    { name: 'invalid UTF-8', method: 'POST', path: '/Users', body: '{"userName":"\udc00"}', status: 400 },
    { name: 'a text/plain body', method: 'POST', path: '/Users', body: user, headers: { 'content-type': 'text/plain' }, status: 415 },
    { name: 'a form body', method: 'POST', path: '/Users', body: 'userName=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415 },
    { name: 'a garbled content type', method: 'POST', path: '/Users', body: user, headers: { 'content-type': ';;;' }, status: 415 },
    { name: 'a body over the limit', method: 'POST', path: '/Users', body: JSON.stringify({ schemas: [USER], userName: long(BODY_LIMIT) }), status: 413 },
    { name: 'a body over the limit, unknown endpoint', method: 'POST', path: '/Nope', body: JSON.stringify({ x: long(BODY_LIMIT) }), status: 413 },
    { name: 'a bad filter', method: 'GET', path: '/Users?filter=userName%20xx', status: 400, scimType: 'invalidFilter' },
    { name: 'a 3,000-character filter', method: 'GET', path: `/Users?filter=${long(3000)}`, status: 400, scimType: 'invalidFilter' },
    { name: 'no token', method: 'GET', path: '/Users', authorization: null, status: 401 },
    { name: 'an unknown token', method: 'GET', path: '/Users', authorization: 'Bearer scim_unknown', status: 401 },
    { name: 'another scheme', method: 'GET', path: '/Users', authorization: 'Basic dXNlcjpwYXNz', status: 401 },
    { name: 'no token on an unknown endpoint', method: 'GET', path: '/Nope', authorization: null, status: 401 },
    // Refused by the router before any route runs, so before authentication: such an id names nothing.
    { name: 'no token with an over-long id', method: 'GET', path: `/Users/${long(3000)}`, authorization: null, status: 404 },
    { name: 'no token with bad JSON', method: 'POST', path: '/Users', body: '{', authorization: null, status: 401 },
    { name: 'Bulk', method: 'POST', path: '/Bulk', body: '{}', status: 501 },
  ];

  it('every case', async () => {
    const platformKey = s.tenant.platformApiKey;
    cases.push({ name: 'a management API key', method: 'GET', path: '/Users', authorization: `Bearer ${platformKey}`, status: 401 });
    const wrong: string[] = [];
    for (const c of cases) {
      const authorization = c.authorization === undefined ? `Bearer ${d.token}` : c.authorization;
      const r = await s.request({
        method: c.method,
        path: `/scim/v2${c.path}`,
        headers: {
          ...(authorization ? { authorization } : {}),
          ...(c.body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
          ...c.headers,
        },
        body: c.body,
      });
      let body: { schemas?: unknown; status?: unknown; scimType?: unknown; detail?: unknown } = {};
      try {
        body = r.json();
      } catch {
        // reported below
      }
      const ok =
        r.status === c.status &&
        /^application\/scim\+json/.test(String(r.headers['content-type'])) &&
        JSON.stringify(body.schemas) === JSON.stringify([ERROR]) &&
        body.status === String(c.status) &&
        (c.scimType === undefined || body.scimType === c.scimType) &&
        typeof body.detail === 'string' &&
        !String(body.detail).includes('a'.repeat(300));
      if (!ok) wrong.push(`${c.name}: ${r.status} ${String(r.headers['content-type'])} ${r.text.slice(0, 160)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
