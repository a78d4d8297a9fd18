import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkTenantAddress, isLoopbackHost, normalizeHost, TenantInputError } from '../../src/kernel/tenancy.js';
import { newId, newSecret } from '../../src/kernel/ids.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('normalizeHost', () => {
  it('lower-cases, drops a trailing dot and default ports', () => {
    assert.equal(normalizeHost('Auth.ACME.test'), 'auth.acme.test');
    assert.equal(normalizeHost('auth.acme.test.'), 'auth.acme.test');
    assert.equal(normalizeHost('auth.acme.test:443'), 'auth.acme.test');
    assert.equal(normalizeHost('auth.acme.test:80'), 'auth.acme.test');
    assert.equal(normalizeHost('auth.acme.test.:443'), 'auth.acme.test');
    assert.equal(normalizeHost('LOCALHOST:3000'), 'localhost:3000');
    assert.equal(normalizeHost('[::1]:3000'), '[::1]:3000');
  });
  it('rejects what is not a host', () => {
    for (const bad of ['', 'a b', 'user@host', 'host/path', 'host:99999', 'host:', '-bad.test', '[zz]:1', 'a..b', 'ho_st']) {
      assert.equal(normalizeHost(bad), null, bad);
    }
  });
});

describe('checkTenantAddress', () => {
  it('defaults the issuer to https, or http for loopback hosts', () => {
    assert.deepEqual(checkTenantAddress('auth.acme.test'), { host: 'auth.acme.test', issuer: 'https://auth.acme.test' });
    assert.deepEqual(checkTenantAddress('localhost:3000'), { host: 'localhost:3000', issuer: 'http://localhost:3000' });
    assert.deepEqual(checkTenantAddress('127.0.0.1:8080'), { host: '127.0.0.1:8080', issuer: 'http://127.0.0.1:8080' });
  });
  it('accepts an explicit issuer on the same host', () => {
    assert.equal(checkTenantAddress('auth.acme.test', 'https://auth.acme.test/').issuer, 'https://auth.acme.test');
    assert.equal(checkTenantAddress('localhost:3000', 'https://localhost:3000').issuer, 'https://localhost:3000');
  });
  it('refuses http off loopback, other hosts, paths, queries, credentials, bad URLs', () => {
    const cases: Array<[string, string]> = [
      ['auth.acme.test', 'http://auth.acme.test'],
      ['auth.acme.test', 'https://other.test'],
      ['auth.acme.test', 'https://auth.acme.test/tenant'],
      ['auth.acme.test', 'https://auth.acme.test?x=1'],
      ['auth.acme.test', 'https://auth.acme.test#f'],
      ['auth.acme.test', 'https://u:p@auth.acme.test'],
      ['auth.acme.test', 'not a url'],
      ['auth.acme.test', 'ftp://auth.acme.test'],
      ['bad host', 'https://x.test'],
    ];
    for (const [host, issuer] of cases) {
      assert.throws(() => checkTenantAddress(host, issuer), TenantInputError, `${host} ${issuer}`);
    }
  });
  it('knows loopback hosts', () => {
    assert.ok(isLoopbackHost('localhost:1'), "isLoopbackHost('localhost:1')");
    assert.ok(isLoopbackHost('127.0.0.2'), "isLoopbackHost('127.0.0.2')");
    assert.ok(isLoopbackHost('[::1]:80'), "isLoopbackHost('[::1]:80')");
    assert.ok(!isLoopbackHost('auth.acme.test'), "!isLoopbackHost('auth.acme.test')");
    assert.ok(!isLoopbackHost('10.0.0.1'), "!isLoopbackHost('10.0.0.1')");
  });
});

describe('ids and secrets', () => {
  it('makes prefixed ids that sort by time', () => {
    const a = newId('evt', 1_000_000);
    const b = newId('evt', 1_000_001);
    assert.match(a, /^evt_[0-9a-z]{26}$/);
    assert.ok(a < b, 'a < b');
  });
  it('makes 256-bit secrets behind their prefix', () => {
    const s = newSecret('sk_live_');
    assert.match(s, /^sk_live_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(s, newSecret('sk_live_'));
  });
});

describe('configuration', () => {
  it('has defaults and reads KEYHALL_* variables', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.bootstrap, true);
    assert.equal(loadConfig({ KEYHALL_PORT: '8080' }).port, 8080);
  });
  it('names the variable that is wrong', () => {
    assert.throws(
      () => loadConfig({ KEYHALL_PORT: 'abc' }),
      (e: Error) => e instanceof ConfigError && /KEYHALL_PORT/.test(e.message),
    );
    assert.throws(() => loadConfig({ KEYHALL_DATABASE_URL: 'mysql://x' }), /KEYHALL_DATABASE_URL/);
  });
});

describe('normalizeHost strictness', () => {
  it('refuses a port inside the name', () => {
    for (const bad of ['host:1:443', 'host:1:80', 'host:1.', '127.0.0.1:3000:443']) assert.equal(normalizeHost(bad), null, bad);
  });
});
