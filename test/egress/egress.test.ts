import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { AppError } from '../../src/kernel/errors.js';
import { createEgressAgent, type EgressAgentOptions } from '../../src/egress/agent.js';
import {
  defaultEgressPolicy,
  EgressConfigError,
  EgressRefusedError,
  forbiddenRange,
  isWebPort,
  parseEgressAllowlist,
  type EgressPolicy,
  type EgressResolver,
} from '../../src/egress/policy.js';
import { assertEgressUrl, checkEgressUrl, checkEgressUrlResolved, checkEgressUrlShape } from '../../src/egress/url.js';
import ipaddr from 'ipaddr.js';

const none = defaultEgressPolicy;
const loopbackAllowed = parseEgressAllowlist('127.0.0.1/32,::1/128');

/** A resolver answering from a table (or a function of the call count), recording each look-up. */
function fakeResolver(answers: Record<string, string[] | ((call: number) => string[])>): EgressResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (name: string) => {
    calls.push(name);
    const entry = answers[name];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    const list = typeof entry === 'function' ? entry(calls.filter((c) => c === name).length) : entry;
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

/**
 * The description of a refused address: the reason, then what it means and how an operator
 * permits one (issue 27: the bare reason left a developer with a local receiver no way forward).
 */
const addressRefused = (field: string) =>
  `${field}: destination address is not allowed: it is a loopback, private, link-local or otherwise non-public address, ` +
  'which Keyhall connects to only when the operator allowlists its network in KEYHALL_EGRESS_ALLOW ' +
  '(e.g. 127.0.0.1/32 for a receiver on the same machine; see docs/webhooks.md, "Egress policy")';

function assertRefused(decision: ReturnType<typeof checkEgressUrl>, description: string, label: string): void {
  assert.equal(decision.ok, false, `${label} should be refused`);
  if (decision.ok) return;
  assert.ok(decision.error instanceof AppError, label);
  assert.equal(decision.error.status, 400, label);
  assert.deepEqual(decision.error.toBody(), { error: 'invalid_request', error_description: description }, label);
}

describe('parseEgressAllowlist', () => {
  it('parses CIDRs and bare addresses, ignoring blanks', () => {
    assert.equal(parseEgressAllowlist(undefined).allow.length, 0);
    assert.equal(parseEgressAllowlist('').allow.length, 0);
    const p = parseEgressAllowlist(' 127.0.0.1/32 , ::1/128,,10.0.0.0/8, 192.168.1.5 ');
    assert.deepEqual(
      p.allow.map(([net, bits]) => `${net.toString()}/${bits}`),
      ['127.0.0.1/32', '::1/128', '10.0.0.0/8', '192.168.1.5/32'],
    );
  });
  it('refuses what is not a dotted-quad address or CIDR, naming the entry', () => {
    for (const bad of ['localhost', '127.1/32', '0x7f000001', '10.0.0.0/33', '::1/129', '::ffff:10.0.0.0/104', '1.2.3.4/x']) {
      assert.throws(
        () => parseEgressAllowlist(`127.0.0.1/32,${bad}`),
        (e: unknown) => e instanceof EgressConfigError && e.message.includes(bad),
        bad,
      );
    }
  });
});

describe('forbiddenRange', () => {
  const table: Array<[string, string | null]> = [
    ['8.8.8.8', null],
    ['93.184.215.14', null],
    ['2606:4700:4700::1111', null],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::808:808', null],
    ['2002:808:808::1', null],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['::ffff:0:a00:1', 'private'], // IPv4-translated (RFC 6145) 10.0.0.1
    ['fd00:ec2::254', 'uniqueLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b:1::a00:1', 'rfc6052'], // local-use NAT64 prefix: refused whatever it embeds
    ['2002:a9fe:a9fe::', 'linkLocal'],
    ['2002:7f00:1::1', 'loopback'],
    ['2001:0:808:808::80ff:fffe', 'loopback'], // Teredo, client 127.0.0.1 (obfuscated)
    ['2001:0:a00:1::f7f7:f7f7', 'private'], // Teredo, server 10.0.0.1
    ['::7f00:1', 'reserved'], // deprecated IPv4-compatible
    ['2001:db8::1', 'reserved'],
    ['100::1', 'discard'],
  ];
  for (const [address, expected] of table) {
    it(`${address} → ${expected ?? 'allowed'}`, () => {
      assert.equal(forbiddenRange(ipaddr.parse(address)), expected);
    });
  }
});

describe('isWebPort', () => {
  it('allows 80, 443 and high ports except listed services', () => {
    for (const p of [80, 443, 1024, 3000, 8080, 8443, 9443, 65535]) assert.equal(isWebPort(p), true, String(p));
    for (const p of [0, 1, 21, 22, 23, 25, 53, 110, 143, 389, 465, 587, 636, 993, 1023, 2049, 2375, 3306, 5432, 6379, 6443, 9200, 10250, 11211, 27017, 65536]) {
      assert.equal(isWebPort(p), false, String(p));
    }
  });
});

describe('checkEgressUrl (registration, syntactic)', () => {
  const address = addressRefused('url');

  it('accepts public https URLs and returns the normalised URL', () => {
    for (const [input, url] of [
      ['https://hooks.example.com/webhooks?x=1', 'https://hooks.example.com/webhooks?x=1'],
      ['HTTPS://Hooks.Example.COM:443/a', 'https://hooks.example.com/a'],
      ['https://hooks.example.com:8443/a', 'https://hooks.example.com:8443/a'],
      ['https://bücher.example/hook', 'https://xn--bcher-kva.example/hook'],
      ['https://93.184.215.14/', 'https://93.184.215.14/'],
      ['https://0x5db8d70e/', 'https://93.184.215.14/'],
      ['https://[2606:4700:4700::1111]/', 'https://[2606:4700:4700::1111]/'],
      ['https://[::ffff:8.8.8.8]/', 'https://[::ffff:808:808]/'],
      ['https://[64:ff9b::808:808]/', 'https://[64:ff9b::808:808]/'],
    ]) {
      const d = checkEgressUrl(input as string, none);
      assert.ok(d.ok, input);
      assert.equal(d.url, url, input);
    }
  });

  it('refuses every SSRF literal of SECURITY-CHECKLIST §13 with one code and reason', () => {
    const vectors = [
      // odd IPv4 spellings of loopback and "this host"
      'https://127.1/',
      'https://0/',
      'https://0.0.0.0/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://017700000001/',
      'https://127.0.0.1/',
      'https://127.000.000.001/',
      'https://0x7f.1/',
      'https://127.0.0.1./',
      'https://%31%32%37.0.0.1/',
      'https://１２７.０.０.１/',
      'https://①②⑦.0.0.1/',
      // IPv6 loopback, unspecified and IPv4-mapped forms
      'https://[::1]/',
      'https://[::]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://[0:0:0:0:0:ffff:7f00:1]/',
      // private, CGNAT, link-local / metadata, ULA, NAT64, 6to4, benchmarking, multicast, broadcast
      'https://10.0.0.1/',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://100.64.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://[fc00::1]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://[2002:a9fe:a9fe::]/',
      'https://198.18.0.1/',
      'https://198.19.0.1/',
      'https://224.0.0.1/',
      'https://[ff02::1]/',
      'https://255.255.255.255/',
      'https://[2001:0:808:808::80ff:fffe]/',
      'https://[::ffff:169.254.169.254]/',
      'https://0xa9fea9fe/',
    ];
    for (const v of vectors) assertRefused(checkEgressUrl(v, none), address, v);
  });

  it('says which range, for the log', () => {
    const d = checkEgressUrl('https://169.254.169.254/', none);
    assert.ok(!d.ok, 'refused');
    assert.equal(d.detail, '169.254.169.254 (linkLocal)');
  });

  it('refuses other schemes and plain http', () => {
    for (const v of [
      'file:///etc/passwd',
      'gopher://example.com:70/_x',
      'data:text/plain,hi',
      'ftp://example.com/',
      'ws://example.com/',
      'javascript:alert(1)',
      'http://hooks.example.com/',
      'http://93.184.215.14/',
    ]) {
      assertRefused(checkEgressUrl(v, none), 'url: only https URLs are allowed', v);
    }
  });

  it('refuses credentials, fragments, bad ports, trailing dots and malformed hosts', () => {
    const cases: Array<[string, string]> = [
      ['https://user@hooks.example.com/', 'url: must not contain credentials'],
      ['https://user:pass@hooks.example.com/', 'url: must not contain credentials'],
      ['https://:pass@hooks.example.com/', 'url: must not contain credentials'],
      ['https://hooks.example.com/#frag', 'url: must not contain a fragment'],
      ['https://hooks.example.com/#', 'url: must not contain a fragment'],
      ['https://hooks.example.com:22/', 'url: port is not allowed'],
      ['https://hooks.example.com:25/', 'url: port is not allowed'],
      ['https://hooks.example.com:6379/', 'url: port is not allowed'],
      ['https://93.184.215.14:6379/', 'url: port is not allowed'],
      ['https://hooks.example.com:0/', 'url: port is not allowed'],
      ['https://hooks.example.com./', 'url: host must not end with a dot'],
      ['https://localhost./', 'url: host must not end with a dot'],
      ['https://a..b/', 'url: host is not a valid DNS name'],
      ['https://-a.example/', 'url: host is not a valid DNS name'],
      ['https://a b.example/', 'url: must be an absolute https URL'],
      ['not a url', 'url: must be an absolute https URL'],
      ['/relative', 'url: must be an absolute https URL'],
      ['', 'url: must be an absolute https URL'],
      [`https://e.example/${'a'.repeat(2100)}`, 'url: is too long'],
    ];
    for (const [v, why] of cases) assertRefused(checkEgressUrl(v, none), why, v);
  });

  it('names the given field', () => {
    assertRefused(checkEgressUrl('https://[::1]/jwks', none, { field: 'jwks_uri' }), addressRefused('jwks_uri'), 'jwks_uri');
  });

  it('lets the allowlist permit its addresses, over http and on any port', () => {
    for (const v of [
      'http://127.0.0.1:4000/hook',
      'https://127.0.0.1:6379/',
      'http://[::1]:8080/',
      'http://2130706433:4000/',
      'http://[::ffff:127.0.0.1]:4000/',
    ]) {
      assert.ok(checkEgressUrl(v, loopbackAllowed).ok, v);
    }
    assertRefused(checkEgressUrl('http://127.0.0.2:4000/', loopbackAllowed), addressRefused('url'), '127.0.0.2');
    assertRefused(checkEgressUrl('https://10.0.0.1/', loopbackAllowed), addressRefused('url'), '10.0.0.1');
    // A name's addresses are unknown here: http and odd ports wait for the resolved check.
    assertRefused(checkEgressUrl('http://localhost:4000/', loopbackAllowed), 'url: only https URLs are allowed', 'localhost');
    assert.ok(checkEgressUrlShape('http://localhost:4000/', loopbackAllowed).ok);
    assert.ok(!checkEgressUrlShape('http://[::2]:4000/', loopbackAllowed).ok);
  });
});

describe('checkEgressUrlResolved (registration, with DNS)', () => {
  const resolver = fakeResolver({
    'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    '127.0.0.1.nip.io': ['127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
    'v6private.example.com': ['93.184.215.14', 'fd00::1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'empty.example.com': [],
    'dev.example.test': ['127.0.0.1', '::1'],
    'halfdev.example.test': ['127.0.0.1', '93.184.215.14'],
  });

  it('accepts a name whose addresses are all public, and reports them', async () => {
    const d = await checkEgressUrlResolved('https://hooks.example.com/in', none, { resolver });
    assert.ok(d.ok, 'accepted');
    assert.deepEqual(d.addresses, ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
  });

  it('refuses names that resolve (even partly) to forbidden addresses', async () => {
    for (const name of ['127.0.0.1.nip.io', 'metadata.example.com', 'mixed.example.com', 'v6private.example.com', 'mapped.example.com']) {
      assertRefused(await checkEgressUrlResolved(`https://${name}/`, none, { resolver }), addressRefused('url'), name);
    }
  });

  it('refuses names that do not resolve, resolve to nothing, or take too long', async () => {
    assertRefused(await checkEgressUrlResolved('https://nxdomain.example.com/', none, { resolver }), 'url: host could not be resolved', 'nx');
    assertRefused(await checkEgressUrlResolved('https://empty.example.com/', none, { resolver }), 'url: host could not be resolved', 'empty');
    const hang: EgressResolver = () => new Promise(() => {});
    assertRefused(
      await checkEgressUrlResolved('https://slow.example.com/', none, { resolver: hang, timeoutMs: 30 }),
      'url: host could not be resolved',
      'slow',
    );
  });

  it('resolves localhost with the system resolver and refuses it', async () => {
    assertRefused(await checkEgressUrlResolved('https://localhost/', none), addressRefused('url'), 'localhost');
    assertRefused(await checkEgressUrlResolved('https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/', none), addressRefused('url'), 'IDN localhost');
  });

  it('permits http and odd ports only when every address is allowlisted', async () => {
    assert.ok((await checkEgressUrlResolved('http://dev.example.test:4000/', loopbackAllowed, { resolver })).ok);
    assert.ok((await checkEgressUrlResolved('https://dev.example.test:6379/', loopbackAllowed, { resolver })).ok);
    assertRefused(await checkEgressUrlResolved('http://halfdev.example.test/', loopbackAllowed, { resolver }), 'url: only https URLs are allowed', 'half');
    assertRefused(await checkEgressUrlResolved('http://hooks.example.com/', loopbackAllowed, { resolver }), 'url: only https URLs are allowed', 'public http');
    assertRefused(await checkEgressUrlResolved('https://hooks.example.com:22/', loopbackAllowed, { resolver }), 'url: port is not allowed', 'port 22');
  });

  it('refuses the syntactic cases without resolving', async () => {
    const r = fakeResolver({});
    assertRefused(await checkEgressUrlResolved('https://u@x.example/', none, { resolver: r }), 'url: must not contain credentials', 'userinfo');
    assertRefused(await checkEgressUrlResolved('https://[::1]/', none, { resolver: r }), addressRefused('url'), '::1');
    assert.deepEqual(r.calls, []);
  });

  it('assertEgressUrl throws the 400 AppError or returns the normalised URL', async () => {
    assert.equal(await assertEgressUrl('HTTPS://HOOKS.example.com', none, { resolver }), 'https://hooks.example.com/');
    await assert.rejects(
      assertEgressUrl('https://127.0.0.1.nip.io/', none, { resolver }),
      (e: unknown) => e instanceof AppError && e.status === 400 && e.code === 'invalid_request',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The connect-time guard, against real listeners on 127.0.0.1 that count TCP connections.

interface Harness {
  port: number;
  connections: number;
  requests: Array<{ host: string | undefined; servername?: string | false | null }>;
  close(): Promise<void>;
}

async function listen(server: http.Server | https.Server, h: Harness): Promise<Harness> {
  server.on('connection', () => h.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.port = (server.address() as AddressInfo).port;
  h.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return h;
}

function startHttp(): Promise<Harness> {
  const h = { port: 0, connections: 0, requests: [] } as unknown as Harness;
  const server = http.createServer((req, res) => {
    h.requests.push({ host: req.headers.host });
    res.end('hello');
  });
  return listen(server, h);
}

// A self-signed certificate for hooks.example.test only (test fixture, valid until 2126).
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwp6qK1Gt2RchvUHu
k7XOIfiyvXlhjJHWfFk/J+cJSgShRANCAAQSAa5kGNxCHUaUzW/QiduVHVTRxbKz
6zf5KycnRUm2uU3YfQdO5wvw+WW5M9zvZ5H2T17isNJnBOwlYQqknvSa
-----END PRIVATE KEY-----`;
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBsDCCAVagAwIBAgIUEelKvs2DyENSUkOfWclA3b0Vp5kwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSaG9va3MuZXhhbXBsZS50ZXN0MCAXDTI2MTEyMjAxMDkzMVoY
DzIxMjYxMDI5MDEwOTMxWjAdMRswGQYDVQQDDBJob29rcy5leGFtcGxlLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQSAa5kGNxCHUaUzW/QiduVHVTRxbKz
6zf5KycnRUm2uU3YfQdO5wvw+WW5M9zvZ5H2T17isNJnBOwlYQqknvSao3IwcDAd
BgNVHQ4EFgQUHXgyIRJztfO7BeT3/wcPHb2T9KEwHwYDVR0jBBgwFoAUHXgyIRJz
tfO7BeT3/wcPHb2T9KEwHQYDVR0RBBYwFIISaG9va3MuZXhhbXBsZS50ZXN0MA8G
A1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgI2D3AaOBOR1WQ4vZ+ROf
awVVPfNU/5KRE+8JNzdlzkQCIQCLcs2L4unHkEU/b4z/dkIB774nQlNZHf251obQ
M9yOUA==
-----END CERTIFICATE-----`;

function startHttps(): Promise<Harness> {
  const h = { port: 0, connections: 0, requests: [] } as unknown as Harness;
  const server = https.createServer({ key: TLS_KEY, cert: TLS_CERT }, (req, res) => {
    h.requests.push({ host: req.headers.host, servername: (req.socket as TLSSocket).servername });
    res.end('secure hello');
  });
  return listen(server, h);
}

async function fetchVia(url: string, policy: EgressPolicy, opts: EgressAgentOptions = {}): Promise<{ status?: number; text?: string; error?: unknown }> {
  const agent = createEgressAgent(policy, { connectTimeoutMs: 2000, ...opts });
  try {
    const res = await request(url, { dispatcher: agent });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (error) {
    return { error };
  } finally {
    await agent.destroy();
  }
}

const refusedError = (r: { error?: unknown }): EgressRefusedError => {
  assert.ok(r.error instanceof EgressRefusedError, `expected an EgressRefusedError, got ${String(r.error)}`);
  return r.error;
};

describe('createEgressAgent (connect-time guard)', () => {
  let plain: Harness;
  let secure: Harness;
  before(async () => {
    plain = await startHttp();
    secure = await startHttps();
  });
  after(async () => {
    await plain.close();
    await secure.close();
  });

  it('connects to an allowlisted address', async () => {
    const before = plain.connections;
    const r = await fetchVia(`http://127.0.0.1:${plain.port}/`, loopbackAllowed);
    assert.equal(r.status, 200);
    assert.equal(r.text, 'hello');
    assert.equal(plain.connections, before + 1);
  });

  it('refuses loopback without the allowlist, and no TCP connection reaches the listener', async () => {
    const before = plain.connections;
    for (const url of [
      `http://127.0.0.1:${plain.port}/`,
      `https://127.0.0.1:${plain.port}/`,
      `http://[::ffff:127.0.0.1]:${plain.port}/`,
      `http://2130706433:${plain.port}/`,
    ]) {
      const err = refusedError(await fetchVia(url, none));
      assert.equal(err.reason, 'destination address is not allowed', url);
    }
    assert.equal(plain.connections, before);
  });

  it('checks a name at connect time: refused when it resolves to loopback, with no connection', async () => {
    const before = plain.connections;
    const resolver = fakeResolver({ '127.0.0.1.nip.io': ['127.0.0.1'] });
    const err = refusedError(await fetchVia(`https://127.0.0.1.nip.io:${plain.port}/`, none, { resolver }));
    assert.equal(err.host, '127.0.0.1.nip.io');
    assert.deepEqual(resolver.calls, ['127.0.0.1.nip.io']);
    assert.equal(plain.connections, before);
  });

  it('refuses when ANY resolved address is forbidden, even if another is allowed', async () => {
    const before = plain.connections;
    const resolver = fakeResolver({ 'dev.example.test': ['127.0.0.1', '10.0.0.7'] });
    refusedError(await fetchVia(`http://dev.example.test:${plain.port}/`, loopbackAllowed, { resolver }));
    assert.equal(plain.connections, before);
  });

  it('is DNS-rebinding safe: the address connected to is the one it just checked', async () => {
    const before = plain.connections;
    // Public at registration, loopback (TTL 0) when the delivery connects.
    const resolver = fakeResolver({ 'rebind.example.com': (call) => (call === 1 ? ['93.184.215.14'] : ['127.0.0.1']) });
    assert.ok((await checkEgressUrlResolved(`https://rebind.example.com:${plain.port}/`, none, { resolver })).ok);
    const err = refusedError(await fetchVia(`https://rebind.example.com:${plain.port}/`, none, { resolver }));
    assert.match(err.message, /127\.0\.0\.1 loopback/);
    assert.equal(plain.connections, before);
  });

  it('applies the port rule at connect time', async () => {
    const resolver = fakeResolver({ 'public.example.com': ['93.184.215.14'] });
    const err = refusedError(await fetchVia('https://public.example.com:6379/', none, { resolver }));
    assert.equal(err.reason, 'port is not allowed');
    const err2 = refusedError(await fetchVia('http://public.example.com/', none, { resolver }));
    assert.equal(err2.reason, 'only https URLs are allowed');
  });

  it('connects by the checked IP and sends the name in Host', async () => {
    const resolver = fakeResolver({ 'dev.example.test': ['127.0.0.1'] });
    const r = await fetchVia(`http://dev.example.test:${plain.port}/`, loopbackAllowed, { resolver });
    assert.equal(r.status, 200);
    assert.equal(plain.requests.at(-1)?.host, `dev.example.test:${plain.port}`);
  });

  it('falls back to the next checked address when one does not answer', async () => {
    const resolver = fakeResolver({ 'dev.example.test': ['127.0.0.2', '127.0.0.1'] });
    const r = await fetchVia(`http://dev.example.test:${plain.port}/`, parseEgressAllowlist('127.0.0.0/8'), { resolver });
    assert.equal(r.status, 200);
  });

  it('reports a failed look-up as a network error, not a refusal', async () => {
    const r = await fetchVia('https://nxdomain.example.com/', none, { resolver: fakeResolver({}) });
    assert.ok(r.error instanceof Error && !(r.error instanceof EgressRefusedError), String(r.error));
  });

  it('over TLS, connects to the checked IP but verifies the certificate and SNI against the name', async () => {
    const resolver = fakeResolver({ 'hooks.example.test': ['127.0.0.1'], 'other.example.test': ['127.0.0.1'] });
    const tls = { ca: TLS_CERT };
    const ok = await fetchVia(`https://hooks.example.test:${secure.port}/`, loopbackAllowed, { resolver, tls });
    assert.equal(ok.status, 200, String(ok.error));
    assert.equal(ok.text, 'secure hello');
    assert.deepEqual(secure.requests.at(-1), { host: `hooks.example.test:${secure.port}`, servername: 'hooks.example.test' });
    // The same listener under another name, or by IP, fails certificate verification.
    const wrongName = await fetchVia(`https://other.example.test:${secure.port}/`, loopbackAllowed, { resolver, tls });
    assert.equal((wrongName.error as { code?: string }).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    const byIp = await fetchVia(`https://127.0.0.1:${secure.port}/`, loopbackAllowed, { tls });
    assert.equal((byIp.error as { code?: string }).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('tells onRefused about refusals', async () => {
    const seen: EgressRefusedError[] = [];
    await fetchVia(`http://127.0.0.1:${plain.port}/`, none, { onRefused: (e) => seen.push(e) });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.host, '127.0.0.1');
  });
});
