import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, USER } from './helpers.js';

type Op = { operationId: string; responses: Record<string, unknown> };
type Doc = { servers: { url: string }[]; security: unknown; paths: Record<string, Record<string, Op>> };

describe('/openapi/scim.json describes the SCIM server', () => {
  let s: TestServer;
  let doc: Doc;
  let dir: Directory;
  before(async () => {
    s = await startTestServer();
    dir = await createDirectory(s);
    const r = await s.request({ path: '/openapi/scim.json' });
    assert.equal(r.status, 200);
    doc = r.json();
  });
  after(() => s.close());

  it('has the SCIM base as its server and the SCIM token as its security', () => {
    assert.deepEqual(doc.servers, [{ url: `${s.tenant.tenant.issuer}/scim/v2` }]);
    assert.deepEqual(doc.security, [{ scimToken: [] }]);
  });

  it('walks a user through the documented operations, each answering a status it documents', async () => {
    const expectDocumented = (method: string, path: string, status: number) => {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is not in the document`);
      assert.ok(String(status) in op.responses, `${method} ${path} answered ${status}, not in the document`);
    };
    const created = await dir.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'ada@acme.test',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ value: 'ada@acme.test', primary: true }],
      active: true,
    });
    expectDocumented('post', '/Users', created.status);
    assert.equal(created.status, 201);
    const id = created.json().id as string;
    const dup = await dir.scim('POST', '/Users', { schemas: [USER], userName: 'ada@acme.test' });
    expectDocumented('post', '/Users', dup.status);
    assert.equal(dup.status, 409);

    const steps: [string, string, string, unknown?][] = [
      ['get', '/Users', '/Users?filter=userName%20eq%20%22ada@acme.test%22'],
      ['post', '/Users/.search', '/Users/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'userName eq "ada@acme.test"' }],
      ['get', '/Users/{id}', `/Users/${id}`],
      [
        'patch',
        '/Users/{id}',
        `/Users/${id}`,
        { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] },
      ],
      ['put', '/Users/{id}', `/Users/${id}`, { schemas: [USER], userName: 'ada@acme.test', active: true }],
      ['get', '/ServiceProviderConfig', '/ServiceProviderConfig'],
      ['get', '/ResourceTypes', '/ResourceTypes'],
      ['get', '/ResourceTypes/{id}', '/ResourceTypes/User'],
      ['get', '/Schemas', '/Schemas'],
      ['get', '/Schemas/{id}', `/Schemas/${USER}`],
      ['get', '/Groups', '/Groups'],
      ['delete', '/Users/{id}', `/Users/${id}`],
      ['get', '/Users/{id}', `/Users/${id}`],
    ];
    const statuses: number[] = [];
    for (const [method, docPath, path, body] of steps) {
      const r = await dir.scim(method.toUpperCase(), path, body);
      expectDocumented(method, docPath, r.status);
      statuses.push(r.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 204, 404]);

    const anonymous = await s.request({ path: '/scim/v2/Users' });
    expectDocumented('get', '/Users', anonymous.status);
    assert.equal(anonymous.status, 401);
  });
});
