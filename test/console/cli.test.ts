import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
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
    assert.match(r.stdout, /Console setup link for the first administrator \(one-time, valid 24 hours\): https:\/\/console\.cli\.test\/console\/setup\?token=[A-Za-z0-9_-]{43}\n/);
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
    assert.deepEqual(JSON.parse(list.stdout).map((a: { email: string }) => a.email), ['ops@example.test']);
    assert.ok(!list.stdout.includes('password'));

    const removed = runCli(['admin', 'remove', '--tenant', HOST, '--email', 'ops@example.test'], env);
    assert.equal(removed.status, 0, removed.stderr);
    assert.match(removed.stdout, /no longer an administrator/);
    assert.match(runCli(['admin', 'list', '--tenant', HOST], env).stdout, /No administrators yet/);

    // The user stayed: granting again needs no password.
    const regrant = runCli(['admin', 'create', '--tenant', HOST, '--email', 'ops@example.test', '--json'], env);
    assert.equal(regrant.status, 0, regrant.stderr);
    assert.equal(JSON.parse(regrant.stdout).created_user, false);
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
