/**
 * The README and the reference pages keep up with the code: every KEYHALL_* setting the
 * configuration reads is in README.md and docs/configuration.md, and every command of
 * `keyhall help`, with each of its flags, is in README.md and docs/cli.md, `keys rotate` with
 * every algorithm it takes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../../src/cli/index.js';
import { loadConfig } from '../../src/config/index.js';
import { SIGNING_ALGS } from '../../src/kernel/crypto/keystore.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** The environment variables loadConfig reads (an environment that records every look-up). */
function settingNames(): string[] {
  const names = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_target, name) => {
      if (typeof name === 'string') names.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return [...names].filter((n) => n.startsWith('KEYHALL_')).sort();
}

/** The commands of `keyhall help` ("tenant create", "serve", …) with the flags of each. */
async function commands(): Promise<Map<string, Set<string>>> {
  const lines: string[] = [];
  assert.equal(await runCli(['help'], { out: (l) => lines.push(l), err: () => {} }), 0);
  const out = new Map<string, Set<string>>();
  for (const line of lines.join('\n').split('\n')) {
    const m = /^ {2}([a-z][a-z-]*)((?: [a-z][a-z-]*)?)( .*)?$/.exec(line);
    if (!m) continue;
    const name = `${m[1]}${m[2]}`;
    const flags = out.get(name) ?? new Set<string>();
    for (const f of (m[3] ?? '').matchAll(/--[a-z][a-z-]*/g)) flags.add(f[0]);
    out.set(name, flags);
  }
  return out;
}

/** The table rows of a markdown page that document `keyhall <name>`. */
const rowsOf = (page: string, name: string) => page.split('\n').filter((l) => l.startsWith('|') && l.includes(`\`keyhall ${name}`));

describe('README and docs cover every setting and command', () => {
  it('every KEYHALL_* setting is in README.md and docs/configuration.md', () => {
    const names = settingNames();
    assert.ok(names.length > 40, `${names.length} settings found`);
    for (const file of ['README.md', 'docs/configuration.md']) {
      const text = read(file);
      const missing = names.filter((n) => !new RegExp(`\`${n}\``).test(text));
      assert.deepEqual(missing, [], `${file} does not mention these settings`);
    }
  });

  it('every command of `keyhall help`, with its flags, is in README.md and docs/cli.md', async () => {
    const all = await commands();
    for (const expected of [
      'serve',
      'migrate',
      'tenant create',
      'tenant list',
      'tenant update',
      'tenant delete',
      'api-keys create',
      'keys rotate',
      'admin create',
      'admin list',
      'admin remove',
      'help',
    ]) {
      assert.ok(all.has(expected), `keyhall help lists ${expected}`);
    }
    for (const file of ['README.md', 'docs/cli.md']) {
      const text = read(file);
      for (const [name, flags] of all) {
        const rows = rowsOf(text, name);
        assert.ok(rows.length > 0, `${file}: no row for keyhall ${name}`);
        const missing = [...flags].filter((f) => !rows.some((r) => r.includes(f)));
        assert.deepEqual(missing, [], `${file}: keyhall ${name} without these flags`);
      }
    }
  });

  it('`keys rotate` is documented with every algorithm it takes', () => {
    for (const file of ['README.md', 'docs/cli.md']) {
      const row = rowsOf(read(file), 'keys rotate').join(' ');
      const missing = SIGNING_ALGS.filter((alg) => !row.includes(alg));
      assert.deepEqual(missing, [], `${file}: keys rotate --alg without these`);
    }
  });
});
