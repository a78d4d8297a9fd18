import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';

const FILE = `version: 1
settings:
  mfa_policy: required
  default_role: viewer
  tokens: { access_token_ttl_seconds: 600, refresh_token_ttl_seconds: null }
  email_sender: { from_address: login@acme.test, from_name: Acme, reply_to: null }
branding:
  default_locale: de
  texts: { en: { "title.sign_in": "Welcome to Acme" } }
resource_servers:
  - identifier: https://api.acme.test
    name: Acme API
    permissions: [{ name: "read:things" }, { name: "write:things", description: Write }]
roles:
  - { key: admin, name: Admin }
  - { key: member, name: Member }
  - key: viewer
    name: Viewer
    permissions: [{ resource_server: https://api.acme.test, permission: "read:things" }]
clients:
  - client_name: Web
    redirect_uris: [https://app.acme.test/cb]
    grant_types: [authorization_code, refresh_token]
    token_endpoint_auth_method: none
  - client_name: Backend
    grant_types: [client_credentials]
    token_endpoint_auth_method: client_secret_basic
    allowed_resources: [https://api.acme.test]
organizations:
  - slug: acme
    name: Acme Inc
    domain: acme.test
    brand_primary_color: "#112233"
    mfa_policy: required
  - { slug: globex, name: Globex }
social_connections:
  - name: GitHub
    preset: github
    client_id: gh-client
    client_secret: \${env:GH_SECRET}
`;

// `keyhall config export|apply` as child processes on the installation's database (SQLite data
// dir, or PostgreSQL with KEYHALL_TEST_DB=postgres).
describe('keyhall config export / apply', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let dir: string;
  const write = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const body = (yaml: string) => yaml.replace(/^# yaml-language-server.*\n/, '');

  before(async () => {
    ({ env, cleanup } = await freshInstallation());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-config-'));
    for (const host of ['a.test', 'b.test']) assert.equal(runCli(['tenant', 'create', '--host', host, '--json'], env).status, 0);
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await cleanup();
  });

  it('applies a file (diff first, secrets from the environment), a second apply changes nothing; export → apply elsewhere → export is equal', () => {
    const file = write('a.yaml', FILE);
    const unset = runCli(['config', 'apply', '--tenant', 'a.test', '-f', file], env);
    assert.equal(unset.status, 1);
    assert.match(unset.stderr, /social_connections\.0\.client_secret: the environment variable GH_SECRET is not set/);
    assert.match(unset.stderr, /nothing was applied/);

    const dry = runCli(['config', 'apply', '--tenant', 'a.test', '-f', file, '--dry-run'], { ...env, GH_SECRET: 's3cret' });
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /^\+ resource_servers "https:\/\/api\.acme\.test"$/m);
    assert.match(dry.stdout, /^~ settings \(default_role\)$/m);
    assert.match(dry.stdout, /^Dry run: \d+ change\(s\) not applied\.$/m);
    assert.doesNotMatch(runCli(['config', 'export', '--tenant', 'a.test'], env).stdout, /acme/);

    const applied = runCli(['config', 'apply', '--tenant', 'a.test', '-f', file], { ...env, GH_SECRET: 's3cret' });
    assert.equal(applied.status, 0, applied.stderr);
    assert.match(applied.stdout, /^\+ clients "Backend"$/m);
    assert.match(applied.stdout, /^Applied \d+ change\(s\) to a\.test\.$/m);
    assert.match(applied.stderr, /client "Backend": client_id cli_\w+, client_secret \(shown once, store it now\) cs_/);

    const again = runCli(['config', 'apply', '--tenant', 'a.test', '-f', file], { ...env, GH_SECRET: 's3cret' });
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stdout.trim(), `No changes: a.test matches ${file}.`);
    // A new secret value is a change (compared with the sealed one), and only that.
    const rotated = runCli(['config', 'apply', '--tenant', 'a.test', '-f', file, '--dry-run'], { ...env, GH_SECRET: 'other' });
    assert.match(rotated.stdout, /^~ social_connections "GitHub" \(client_secret\)$/m);

    const exported = runCli(['config', 'export', '--tenant', 'a.test'], env);
    assert.equal(exported.status, 0, exported.stderr);
    assert.match(exported.stdout, /^# yaml-language-server: \$schema=https:\/\/a\.test\/v1\/config\.schema\.json$/m);
    assert.match(exported.stdout, /client_secret: \$\{env:KEYHALL_SOCIAL_GITHUB_CLIENT_SECRET\}/);
    assert.ok(!exported.stdout.includes('s3cret'), 'export writes references, never secret values');
    const copy = write('export.yaml', exported.stdout);
    const intoB = runCli(['config', 'apply', '--tenant', 'b.test', '-f', copy], { ...env, KEYHALL_SOCIAL_GITHUB_CLIENT_SECRET: 's3cret' });
    assert.equal(intoB.status, 0, intoB.stderr);
    assert.equal(body(runCli(['config', 'export', '--tenant', 'b.test'], env).stdout), body(exported.stdout));
    const events = runCli(['config', 'apply', '--tenant', 'b.test', '-f', copy], { ...env, KEYHALL_SOCIAL_GITHUB_CLIENT_SECRET: 's3cret' });
    assert.match(events.stdout, /^No changes/m);
  });

  it('--prune removes what the file no longer names; without it, it is listed and kept', () => {
    const smaller = write('smaller.yaml', FILE.replace('  - { slug: globex, name: Globex }\n', '').replace(/ {2}- client_name: Backend\n( {4}.*\n){3}/, ''));
    const kept = runCli(['config', 'apply', '--tenant', 'a.test', '-f', smaller], { ...env, GH_SECRET: 's3cret' });
    assert.equal(kept.status, 0, kept.stderr);
    assert.match(kept.stdout, /clients "Backend": not in the file, kept \(--prune removes it\)/);
    assert.match(kept.stdout, /organizations "globex": not in the file, kept/);
    const pruned = runCli(['config', 'apply', '--tenant', 'a.test', '-f', smaller, '--prune'], { ...env, GH_SECRET: 's3cret' });
    assert.equal(pruned.status, 0, pruned.stderr);
    assert.match(pruned.stdout, /^- clients "Backend"$/m);
    assert.match(pruned.stdout, /^- organizations "globex"$/m);
    const after = runCli(['config', 'export', '--tenant', 'a.test'], env).stdout;
    assert.doesNotMatch(after, /globex|Backend/);
    assert.match(after, /slug: acme/);
    assert.match(runCli(['config', 'apply', '--tenant', 'a.test', '-f', smaller, '--prune'], { ...env, GH_SECRET: 's3cret' }).stdout, /^No changes/m);
  });

  it('a file that does not match the schema, or names what does not exist: per-path errors, exit 1, nothing applied', () => {
    const bad = write(
      'bad.yaml',
      `version: 1
clients:
  - client_name: X
    redirect_uris: [ftp://x]
social_connections:
  - { name: G, preset: github, client_id: c, client_secret: plain-secret }
organizations:
  - { slug: Not A Slug, name: N }
`,
    );
    const r = runCli(['config', 'apply', '--tenant', 'a.test', '-f', bad], env);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /clients\.0\.redirect_uris\.0: must be https/);
    assert.match(r.stderr, /social_connections\.0\.client_secret: must be a reference \$\{env:NAME\}/);
    assert.match(r.stderr, /organizations\.0\.slug: must be lower-case/);
    assert.ok(!r.stderr.includes('plain-secret'));
    const refs = write(
      'refs.yaml',
      'version: 1\nroles:\n  - { key: r, name: R, permissions: [{ resource_server: "https://nope.test", permission: x }] }\nsettings: { default_role: ghost }\n',
    );
    const r2 = runCli(['config', 'apply', '--tenant', 'a.test', '-f', refs], env);
    assert.equal(r2.status, 1);
    assert.match(r2.stderr, /roles\.0\.permissions\.0: no resource server "https:\/\/nope\.test"/);
    assert.match(r2.stderr, /settings\.default_role: no tenant-wide role "ghost"/);
    assert.match(runCli(['config', 'apply', '--tenant', 'a.test', '-f', write('y.yaml', 'version: [1\n')], env).stderr, /y\.yaml: /);
    assert.equal(runCli(['config', 'apply', '--tenant', 'a.test'], env).status, 2);
    assert.doesNotMatch(runCli(['config', 'export', '--tenant', 'a.test'], env).stdout, /client_name: X|key: r\n/);
  });
});

describe('keyhall config apply on a keyhall serve tenant', () => {
  it('applies to the served http://localhost tenant, which serves the schema at /v1/config.schema.json without a key', async () => {
    const { env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'info' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-config-serve-'));
    const child = spawnServer(['--port', '0'], env);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const end = Date.now() + 90_000;
      while (!/issuer\s+http:\/\/localhost:\d+/.test(out)) {
        if (Date.now() > end) throw new Error(`keyhall serve did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
      const res = await fetch(`${issuer}/v1/config.schema.json`);
      assert.equal(res.status, 200);
      const schema = (await res.json()) as { properties: Record<string, unknown>; required: string[] };
      assert.ok(schema.properties.organizations && schema.properties.clients && schema.required.includes('version'));
      const host = new URL(issuer).host;
      const file = path.join(dir, 'k.yaml');
      fs.writeFileSync(file, 'version: 1\norganizations:\n  - { slug: served, name: Served }\n');
      const r = runCli(['config', 'apply', '--tenant', host, '-f', file], env);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^\+ organizations "served"$/m);
      const tenant = JSON.parse(runCli(['api-keys', 'create', '--tenant', host, '--json'], env).stdout) as { key: string };
      const orgs = await fetch(`${issuer}/v1/organizations`, { headers: { authorization: `Bearer ${tenant.key}` } });
      const list = (await orgs.json()) as { data: { slug: string }[] };
      assert.deepEqual(
        list.data.map((o) => o.slug),
        ['served'],
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
      await cleanup();
    }
  });
});
