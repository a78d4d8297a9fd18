import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const script = path.resolve(import.meta.dirname, '../../scripts/build-if-stale.mjs');

// `npm start` runs this script: it compiles only when dist/ is older than the sources.
describe('npm start builds only a stale dist/', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-build-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src/main.ts'), 'export const answer: number = 42;\n');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: 'src', module: 'NodeNext', target: 'ES2023', types: [] }, include: ['src/**/*.ts'] }),
  );
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
  const run = () => spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' });

  it('builds when dist/ is missing, skips when up to date, rebuilds after a source change', () => {
    const first = run();
    assert.equal(first.status, 0, first.stderr + first.stdout);
    assert.match(first.stderr, /building dist/);
    assert.ok(fs.existsSync(path.join(dir, 'dist/main.js')));

    const second = run();
    assert.equal(second.status, 0);
    assert.equal(second.stderr, '', 'nothing to build');

    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(path.join(dir, 'src/main.ts'), later, later);
    const third = run();
    assert.equal(third.status, 0);
    assert.match(third.stderr, /building dist/);
  });

  it('a failed build is not recorded as up to date', () => {
    fs.writeFileSync(path.join(dir, 'src/main.ts'), 'export const answer: number = "no";\n');
    const later = new Date(Date.now() + 10_000);
    fs.utimesSync(path.join(dir, 'src/main.ts'), later, later);
    assert.notEqual(run().status, 0);
    assert.match(run().stderr, /building dist/, 'tried again');
  });
});
