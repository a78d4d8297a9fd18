#!/usr/bin/env node
// `npm start` builds only when dist/ is out of date, in two independent parts:
// - the server: when any src/**/*.ts, tsconfig.json or package.json is newer than the last
//   successful build (dist/.build-stamp);
// - the console (issue 18, docs/console.md), when the project has one: when any console/ source
//   or package.json is newer than dist/console-assets/.build-stamp. The console's API types
//   (console/src/generated/, from the server's OpenAPI document: scripts/openapi.ts) are
//   generated first when missing or older than src/, so a new enum value reaches the console.
// A restart with an up-to-date dist/ starts at once instead of recompiling. `--force` always
// builds; `--console` looks at the console only (tests that drive the built console use it),
// `--server` at the server only (npm run bench runs the compiled server).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** Runs a build step; its exit status (0: built). */
function run(what, args) {
  process.stderr.write(`keyhall: building ${what} (it is missing or older than the sources)…\n`);
  return spawnSync(process.execPath, args, { stdio: 'inherit' }).status ?? 1;
}

if (!process.argv.includes('--console')) {
  const stamp = join('dist', '.build-stamp');
  const inputs = Math.max(newestMtime('src', ['.ts']), statSync('tsconfig.json').mtimeMs, statSync('package.json').mtimeMs);
  if (force || stampTime(stamp) < inputs) {
    const r = run('dist/', [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json']);
    if (r !== 0) process.exit(r);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
}

/**
 * One console build at a time: test files that drive the console run in parallel, and a second
 * Vite build emptying dist/console-assets under the first one's server would break it. The lock
 * is a directory (mkdir is atomic); a lock older than the longest build is a crashed one.
 */
function withConsoleLock(fn) {
  const lock = join('dist', '.console-build-lock');
  mkdirSync('dist', { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (Date.now() - stampTime(lock) > 300_000) rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

if (!process.argv.includes('--server') && existsSync(join('console', 'vite.config.ts'))) {
  withConsoleLock(() => {
    // Looked at under the lock: a build that just finished elsewhere leaves nothing to do.
    const generated = join('console', 'src', 'generated', 'keyhall-v1.ts');
    if (force || stampTime(generated) < newestMtime('src', ['.ts'])) {
      const r = run('console/src/generated/', ['--import', 'tsx', join('scripts', 'openapi.ts')]);
      if (r !== 0) throw new Error(`generating the console's API types failed (exit ${r})`);
    }
    const stamp = join('dist', 'console-assets', '.build-stamp');
    const inputs = Math.max(newestMtime('console', ['.ts', '.tsx', '.css', '.html', '.json']), statSync('package.json').mtimeMs);
    if (force || stampTime(stamp) < inputs) {
      const r = run('dist/console-assets/', [join('node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join('console', 'vite.config.ts')]);
      if (r !== 0) throw new Error(`the console build failed (exit ${r})`);
      writeFileSync(stamp, `${new Date().toISOString()}\n`);
    }
  });
}
