import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { Browser, signIn } from '../signin/helpers.js';
import { FIREBASE_HASH_CONFIG, FIXTURES } from './helpers.js';

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

// `keyhall import users` and `keyhall export` on the data of a server started by `keyhall serve`
// on its http://localhost tenant, the way the quick start runs it.
describe('keyhall import users / keyhall export', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let dir: string;
  before(async () => {
    ({ env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'info' }));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-import-cli-'));
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await cleanup();
  });

  it('imports Firebase users with the hash flags into the served tenant; they sign in on its hosted login; export writes them back', async () => {
    const child = spawnServer(['--port', '0'], env);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => /issuer\s+http:\/\/localhost:\d+/.test(out));
      const issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
      const host = new URL(issuer).host;
      const port = Number(new URL(issuer).port);
      const file = path.join(FIXTURES, 'firebase.json');
      const flags = [
        '--hash-key',
        FIREBASE_HASH_CONFIG.signer_key,
        '--salt-separator',
        FIREBASE_HASH_CONFIG.salt_separator,
        '--rounds',
        String(FIREBASE_HASH_CONFIG.rounds),
        '--mem-cost',
        String(FIREBASE_HASH_CONFIG.mem_cost),
      ];

      const dry = runCli(['import', 'users', '--tenant', host, '--format', 'firebase', '--dry-run', ...flags, file], env);
      assert.equal(dry.status, 0, dry.stderr);
      assert.match(dry.stdout, /^Dry run \(nothing written\): import imp_[0-9a-z]{26} succeeded: 2 rows, 2 created, 0 updated, 0 rejected/);
      assert.equal((await signIn(new Browser(port, host), '/login', 'user1@example.com', 'user1password')).status, 401);

      const r = runCli(['import', 'users', '--tenant', host, '--format', 'firebase', '--json', ...flags, file], env);
      assert.equal(r.status, 0, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.equal(summary.status, 'succeeded');
      assert.deepEqual([summary.counts.created, summary.counts.rejected], [2, 0]);
      assert.ok(!r.stdout.includes('lSrfV15'), 'the summary never echoes a hash');

      assert.equal((await signIn(new Browser(port, host), '/login', 'user1@example.com', 'user1passwordx')).status, 401);
      assert.equal((await signIn(new Browser(port, host), '/login', 'user1@example.com', 'user1password')).status, 303);

      const again = runCli(['import', 'users', '--tenant', host, '--format', 'firebase', ...flags, file], env);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /2 rows, 0 created, 2 updated, 0 rejected/);

      const plain = runCli(['export', '--tenant', host], env);
      assert.equal(plain.status, 0, plain.stderr);
      assert.match(plain.stdout, /"type":"user".*"email":"user1@example.com"/);
      assert.ok(!plain.stdout.includes('password_hash'));
      const outFile = path.join(dir, 'export.jsonl');
      const secret = runCli(['export', '--tenant', host, '--include-secrets', '--out', outFile], env);
      assert.equal(secret.status, 0, secret.stderr);
      assert.equal(fs.statSync(outFile).mode & 0o777, 0o600);
      // The re-run brought the Firebase hash back; the user has not signed in since.
      assert.match(fs.readFileSync(outFile, 'utf8'), /"email":"user1@example.com"[^\n]*"password_hash":"\$firebase-scrypt\$ln=14,r=8,/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('usage mistakes exit 2 with one line; bad rows are listed with their reasons', () => {
    const bad = runCli(['import', 'users', '--tenant', 'localhost', '--format', 'ldif', 'x.ldif'], env);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--format must be one of auth0, firebase, keycloak, cognito, jsonl, csv/);
    const partial = runCli(['import', 'users', '--tenant', 'localhost', '--format', 'firebase', '--rounds', '8', path.join(FIXTURES, 'firebase.json')], env);
    assert.equal(partial.status, 2);
    assert.match(partial.stderr, /--hash-key, --rounds and --mem-cost go together/);
    const missing = runCli(['import', 'users', '--tenant', 'localhost', '--format', 'jsonl', path.join(dir, 'nope.jsonl')], env);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot read .*nope\.jsonl: ENOENT/);

    const rows = path.join(dir, 'rows.jsonl');
    fs.writeFileSync(
      rows,
      `${JSON.stringify({ id: 'a', email: 'a@cli.test' })}\nnot json\n${JSON.stringify({ id: 'b', email: 'b@cli.test', password_hash: 'md5:abc' })}\n`,
    );
    const tenants = JSON.parse(runCli(['tenant', 'list', '--json'], env).stdout);
    const r = runCli(['import', 'users', '--tenant', tenants[0].host, '--format', 'jsonl', rows], env);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /3 rows, 1 created, 0 updated, 2 rejected/);
    assert.match(r.stdout, /row 2: invalid_json/);
    assert.match(r.stdout, /row 3 \(b\): unknown_hash_format/);
    assert.ok(!r.stdout.includes('md5:abc'));
  });
});
