import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, USER } from './helpers.js';

/** A deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'userName',
  'externalId',
  'emails',
  'emails.value',
  'members',
  'name.givenName',
  'active',
  'meta.created',
  'password',
  'urn:x:y',
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'le',
  'pr',
  'and',
  'or',
  'not',
  '(',
  ')',
  '[',
  ']',
  '"a"',
  '"%_\\\\"',
  '"\\""',
  'true',
  'null',
  '42',
  '-1e999',
  '"2020-01-01T00:00:00Z"',
  "'",
  ';',
  '--',
  '/*',
  '.',
  ' ',
];

const pick = <T>(next: () => number, list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
const ATTRS = [
  'userName',
  'externalId',
  'displayName',
  'name.familyName',
  'emails.value',
  'emails.type',
  'active',
  'meta.created',
  'meta.lastModified',
  'members.value',
  'id',
];
const OPS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
const VALUES = ['"fuzz@acme.example"', '"F"', '""', '"%"', '"\\\\"', 'true', 'false', '7', '"2030-01-01T00:00:00Z"', '"dsu_00000000000000000000000000"'];

function expression(next: () => number, depth: number): string {
  const roll = next();
  if (depth < 3 && roll < 0.25) return `${expression(next, depth + 1)} ${pick(next, ['and', 'or'])} ${expression(next, depth + 1)}`;
  if (depth < 3 && roll < 0.35) return `not (${expression(next, depth + 1)})`;
  if (roll < 0.45) return `emails[type eq "work" and value ${pick(next, OPS)} ${pick(next, VALUES)}]`;
  const attr = pick(next, ATTRS);
  return next() < 0.15 ? `${attr} pr` : `${attr} ${pick(next, OPS)} ${pick(next, VALUES)}`;
}

describe('SCIM filters: random input is answered 200 or 400 invalidFilter, never anything else', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s, { rate_limit_per_minute: 100_000 });
    await d.scim('POST', '/Users', { schemas: [USER], userName: 'fuzz@acme.example' });
  });
  after(() => s.close());

  for (const resource of ['Users', 'Groups']) {
    it(`/${resource}: 250 generated filters`, async () => {
      const next = random(resource.length * 7919);
      for (let i = 0; i < 250; i++) {
        const length = 1 + Math.floor(next() * 9);
        const filter = Array.from({ length }, () => pick(next, PIECES)).join(' ');
        const r = await d.scim('GET', `/${resource}?filter=${encodeURIComponent(filter)}`);
        const ok = r.status === 200 || (r.status === 400 && r.json().scimType === 'invalidFilter');
        assert.ok(ok, `${filter} → ${r.status} ${r.text}`);
      }
    });

    it(`/${resource}: 250 well-formed filters over every attribute, operator and value type`, async () => {
      const next = random(resource.length * 104729);
      let answered = 0;
      for (let i = 0; i < 250; i++) {
        const filter = expression(next, 0);
        const r = await d.scim('GET', `/${resource}?filter=${encodeURIComponent(filter)}`);
        const ok = r.status === 200 || (r.status === 400 && r.json().scimType === 'invalidFilter');
        assert.ok(ok, `${filter} → ${r.status} ${r.text}`);
        if (r.status === 200) answered++;
      }
      assert.ok(answered > 25, `only ${answered} filters reached the database`);
    });

    it(`/${resource}: names of Object's prototype are not attributes, in a filter or sortBy`, async () => {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'emails.constructor']) {
        for (const filter of [`${name} eq "x"`, `${name} pr`, `${name} pr and id pr`, `not (${name} pr)`]) {
          const r = await d.scim('GET', `/${resource}?filter=${encodeURIComponent(filter)}`);
          assert.equal(r.status, 400, `${filter} → ${r.status} ${r.text}`);
          assert.equal(r.json().scimType, 'invalidFilter', filter);
        }
        const sorted = await d.scim('GET', `/${resource}?sortBy=${encodeURIComponent(name)}`);
        assert.equal(sorted.status, 400, `sortBy=${name} → ${sorted.status} ${sorted.text}`);
        assert.equal(sorted.json().scimType, 'invalidValue', `sortBy=${name}`);
      }
    });
  }
});
