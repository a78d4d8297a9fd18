#!/usr/bin/env node
// `npm start` builds only when dist/ is out of date, in two independent parts:
// - the server: when any src/**/*.ts, tsconfig.json or package.json is newer than the last
//   successful build (dist/.build-stamp);
// - the console (issue 18, docs/console.md), when the project has one: when any console/ source
//   or package.json is newer than dist/console-assets/.build-stamp.
// A restart with an up-to-date dist/ starts at once instead of recompiling. `--force` always
// builds; `--console` looks at the console only (tests that drive the built console use it).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const force = process.argv.includes('--force');
const require = createRequire(import.meta.url);

function newestMtime(dir, extensions) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p, extensions));
    else if (extensions.some((x) => e.name.endsWith(x))) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  // A deleted or renamed file changes its directory's mtime.
  return Math.max(newest, statSync(dir).mtimeMs);
}

function stampTime(stamp) {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

function run(what, args) {
  process.stderr.write(`keyhall: building ${what} (it is missing or older than the sources)…\n`);
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!process.argv.includes('--console')) {
  const stamp = join('dist', '.build-stamp');
  const inputs = Math.max(newestMtime('src', ['.ts']), statSync('tsconfig.json').mtimeMs, statSync('package.json').mtimeMs);
  if (force || stampTime(stamp) < inputs) {
    run('dist/', [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json']);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
}

if (existsSync(join('console', 'vite.config.ts'))) {
  const stamp = join('dist', 'console-assets', '.build-stamp');
  const inputs = Math.max(newestMtime('console', ['.ts', '.tsx', '.css', '.html', '.json']), statSync('package.json').mtimeMs);
  if (force || stampTime(stamp) < inputs) {
    run('dist/console-assets/', [join('node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join('console', 'vite.config.ts')]);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
}
