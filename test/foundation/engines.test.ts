/**
 * Every package `npm ci` installs runs on every Node version Keyhall declares (package.json
 * `engines`): otherwise npm prints EBADENGINE and a dependency may break on a supported Node
 * (cookie@2 under light-my-request once required Node 22 while Keyhall declares 20.19+).
 * Optional packages are left out: npm skips those whose engines do not match (better-sqlite3 13
 * on Node 20, src/storage/db.ts). .ci/run also fails when `npm ci` prints EBADENGINE.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';

const root = path.resolve(import.meta.dirname, '../..');
const readJson = (name: string) => JSON.parse(readFileSync(path.join(root, name), 'utf8')) as Record<string, unknown>;

interface LockedPackage {
  version?: string;
  optional?: boolean;
  engines?: { node?: string } | string[];
}

describe('declared Node engines', () => {
  const declared = (readJson('package.json').engines as { node: string }).node;
  const packages = readJson('package-lock.json').packages as Record<string, LockedPackage>;

  it('declares Node 20.19+, 22.13+, 24 and 25', () => {
    for (const v of ['20.19.0', '22.13.0', '24.0.0', '25.0.0']) assert.ok(semver.satisfies(v, declared), `${v} in ${declared}`);
    assert.ok(!semver.satisfies('20.18.0', declared));
    // better-sqlite3 12 (the binding on Node 20, installed on every Node) ends at 25.
    assert.ok(!semver.satisfies('26.0.0', declared));
  });

  it('every installed package accepts every declared Node version', () => {
    const outside = Object.entries(packages)
      .filter(([where, p]) => where !== '' && !p.optional && p.engines && !Array.isArray(p.engines) && p.engines.node)
      .filter(([, p]) => !semver.subset(declared, (p.engines as { node: string }).node))
      .map(([where, p]) => `${where.replace(/^.*node_modules\//, '')}@${p.version} requires node ${(p.engines as { node: string }).node}`);
    assert.deepEqual(outside, [], `packages outside "${declared}": pin a version or add an override in package.json`);
  });
});

describe('light-my-request on cookie 1 (the package.json override)', () => {
  it("Fastify's inject still sends cookies", async () => {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.get('/', async (request) => ({ cookie: request.headers.cookie }));
    const res = await app.inject({ method: 'GET', url: '/', cookies: { a: 'b c', d: 'e' } });
    assert.deepEqual(res.json(), { cookie: 'a=b%20c; d=e' });
    await app.close();
  });
});
