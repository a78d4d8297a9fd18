import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EXAMPLES } from '../../src/management/openapi/examples.js';
import { OPERATIONS } from '../../src/management/openapi/operations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Operation = { operationId?: string; summary?: string; tags?: string[]; responses: Record<string, { $ref?: string; description?: string }> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>>; tags: { name: string }[] };

const operationsOf = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));

describe('/v1/openapi.json describes every operation for client generators', () => {
  let s: TestServer;
  let doc: Doc;
  before(async () => {
    s = await startTestServer();
    doc = (await s.request({ path: '/v1/openapi.json' })).json();
  });
  after(() => s.close());

  it('has an OPERATIONS entry for every /v1 route, and no entry without a route', () => {
    const keys = operationsOf(doc)
      .map((o) => o.key)
      .sort();
    assert.deepEqual(
      keys.filter((k) => !OPERATIONS[k]),
      [],
      'routes without an entry in src/management/openapi/operations.ts',
    );
    assert.deepEqual(
      Object.keys(OPERATIONS).filter((k) => !keys.includes(k)),
      [],
      'entries without a route',
    );
    assert.deepEqual(
      Object.keys(EXAMPLES).filter((k) => !keys.includes(k)),
      [],
      'examples without a route',
    );
  });

  it('gives each operation a unique camelCase operationId, a summary, a defined tag and real descriptions', () => {
    const ids = new Set<string>();
    const tags = new Set(doc.tags.map((t) => t.name));
    for (const { key, op } of operationsOf(doc)) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, key);
      assert.ok(!ids.has(op.operationId!), `duplicate ${op.operationId}`);
      ids.add(op.operationId!);
      assert.ok(op.summary, key);
      assert.ok(op.tags?.length && op.tags.every((t) => tags.has(t)), key);
      for (const [status, r] of Object.entries(op.responses)) assert.ok(r.$ref || (r.description && r.description !== 'Default Response'), `${key} ${status}`);
    }
  });

  it('lists the shared error responses each operation can answer, with the Error schema', () => {
    const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
    for (const { key, op } of operationsOf(doc)) {
      assert.deepEqual(op.responses['401'], ref('Unauthorized'), key);
      assert.deepEqual(op.responses['403'], ref('Forbidden'), key);
      assert.deepEqual(op.responses['429'], ref('TooManyRequests'), key);
    }
    const create = doc.paths['/v1/organizations']!.post!;
    for (const [status, name] of [
      ['400', 'BadRequest'],
      ['409', 'Conflict'],
      ['413', 'PayloadTooLarge'],
      ['415', 'UnsupportedMediaType'],
    ] as const) {
      assert.deepEqual(create.responses[status], ref(name));
    }
    assert.deepEqual(doc.paths['/v1/organizations/{orgId}']!.get!.responses['404'], ref('NotFound'));
    assert.deepEqual(doc.paths['/v1/api_keys/{keyId}']!.delete!.responses['409'], ref('Conflict'));
    assert.deepEqual(doc.components.schemas!.Error, {
      description: 'An error: a machine-readable code and a human-readable description',
      type: 'object',
      properties: { error: { type: 'string' }, error_description: { type: 'string' } },
      required: ['error'],
      additionalProperties: false,
    });
    const rateLimited = doc.components.responses!.TooManyRequests as { headers: Record<string, unknown> };
    assert.ok(rateLimited.headers['Retry-After']);
  });

  it('names the resources as component schemas and uses them', () => {
    for (const name of [
      'Organization',
      'User',
      'Member',
      'ApiKey',
      'CreatedApiKey',
      'Webhook',
      'WebhookDelivery',
      'Event',
      'Client',
      'ResourceServer',
      'DirectoryConnection',
      'Error',
    ]) {
      assert.ok(doc.components.schemas![name], name);
    }
    const created = doc.paths['/v1/organizations']!.post!.responses['201'] as unknown as { content: Record<string, { schema: unknown; example: unknown }> };
    assert.deepEqual(created.content['application/json']!.schema, { $ref: '#/components/schemas/Organization' });
    assert.ok(created.content['application/json']!.example);
  });

  it('is served without a key, with the tenant issuer as its server', async () => {
    const r = await s.request({ path: '/v1/openapi.json' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json().servers, [{ url: s.tenant.tenant.issuer }]);
    assert.deepEqual(r.json().security, [{ apiKey: [] }]);
  });
});
