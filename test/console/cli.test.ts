import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { openDatabase } from '../../src/storage/db.js';
import { freshInstallation } from '../helpers/db.js';

// `keyhall tenant create` prints the console setup link; `keyhall admin create|list|remove`.
describe('keyhall admin', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  const HOST = 'console.cli.test';
  before(async () => {
    ({ env, cleanup } = await freshInstallation());
  });
  after(() => cleanup());

  it('tenant create prints a one-time console setup link', () => {
    const r = runCli(['tenant', 'create', '--host', HOST], env);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /Console setup link for the first administrator \(one-time, valid 24 hours\): https:\/\/console\.cli\.test\/console\/setup\?token=[A-Za-z0-9_-]{43}\n/,
    );
  });

  it('admin create makes a new user (password from stdin) or an existing one an administrator; list and remove', () => {
    const made = runCli(['admin', 'create', '--tenant', HOST, '--email', 'Ops@Example.test', '--password-stdin', '--json'], env, 'a long enough password\n');
    assert.equal(made.status, 0, made.stderr);
    const out = JSON.parse(made.stdout);
    assert.equal(out.email, 'ops@example.test');
    assert.equal(out.created_user, true);
    assert.equal(out.already_admin, false);

    const again = runCli(['admin', 'create', '--tenant', HOST, '--email', 'ops@example.test'], env);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /already is an administrator/);

    const list = runCli(['admin', 'list', '--tenant', HOST, '--json'], env);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(
      JSON.parse(list.stdout).map((a: { email: string }) => a.email),
      ['ops@example.test'],
    );
    assert.ok(!list.stdout.includes('password'));

    const removed = runCli(['admin', 'remove', '--tenant', HOST, '--email', 'ops@example.test'], env);
    assert.equal(removed.status, 0, removed.stderr);
    assert.match(removed.stdout, /no longer an administrator/);
    assert.match(runCli(['admin', 'list', '--tenant', HOST], env).stdout, /No administrators yet/);

    // The user stayed: granting again needs no password.
    const regrant = runCli(['admin', 'create', '--tenant', HOST, '--email', 'ops@example.test', '--json'], env);
    assert.equal(regrant.status, 0, regrant.stderr);
    assert.equal(JSON.parse(regrant.stdout).created_user, false);
    // Its password was chosen here, at the command line: nothing to warn about.
    assert.equal(regrant.stderr, '');
  });

  it("admin create warns when who set an existing account's password is not recorded (or was a narrower key)", async () => {
    const made = runCli(
      ['admin', 'create', '--tenant', HOST, '--email', 'prepared@example.test', '--password-stdin', '--json'],
      env,
      'a long enough password\n',
    );
    assert.equal(made.status, 0, made.stderr);
    const id = JSON.parse(made.stdout).user_id as string;
    assert.equal(runCli(['admin', 'remove', '--tenant', HOST, '--email', 'prepared@example.test'], env).status, 0);
    // A password set where it is not recorded (an instance on the previous release).
    const db = openDatabase({ databaseUrl: env.KEYHALL_DATABASE_URL, dataDir: env.KEYHALL_DATA_DIR! });
    try {
      await db.kysely.updateTable('users').set({ password_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo' }).where('id', '=', id).execute();
    } finally {
      await db.close();
    }
    const r = runCli(['admin', 'create', '--tenant', HOST, '--email', 'prepared@example.test'], env);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /is now an administrator/);
    assert.match(
      r.stderr,
      new RegExp(`^Warning: someone not recorded set the password of prepared@example\\.test; whoever did may know it\\. .*PATCH /v1/users/${id}`),
    );
  });

  it('admin create --link prints a fresh setup link', () => {
    const r = runCli(['admin', 'create', '--tenant', HOST, '--link', '--json'], env);
    assert.equal(r.status, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).console_setup_link, /^https:\/\/console\.cli\.test\/console\/setup\?token=[A-Za-z0-9_-]{43}$/);
  });

  it('exits 2 with a clear message for bad arguments', () => {
    const cases: Array<[string[], RegExp, string?]> = [
      [['admin'], /usage: keyhall admin/],
      [['admin', 'list', '--tenant', 'nowhere.test'], /no tenant nowhere\.test/],
      [['admin', 'create', '--tenant', HOST], /--email <email> or --link/],
      [['admin', 'create', '--tenant', HOST, '--email', 'new@example.test'], /--password-stdin to create one/],
      [['admin', 'create', '--tenant', HOST, '--email', 'new@example.test', '--password-stdin'], /8 to 256 characters/, 'short\n'],
      [['admin', 'remove', '--tenant', HOST, '--email', 'nobody@example.test'], /not an administrator/],
    ];
    for (const [args, message, input] of cases) {
      const r = runCli(args, env, input);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });
});
