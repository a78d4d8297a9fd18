#!/usr/bin/env node
// `npm start` builds only when dist/ is out of date: when any src/**/*.ts, tsconfig.json or
// package.json is newer than the last successful build (dist/.build-stamp) — a restart with an
// up-to-date dist/ starts at once instead of recompiling. `--force` always builds.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const STAMP = join('dist', '.build-stamp');

function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  // A deleted or renamed file changes its directory's mtime.
  return Math.max(newest, statSync(dir).mtimeMs);
}

function stampTime() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

const inputs = Math.max(newestMtime('src'), statSync('tsconfig.json').mtimeMs, statSync('package.json').mtimeMs);
if (!process.argv.includes('--force') && stampTime() >= inputs) process.exit(0);

process.stderr.write('keyhall: building dist/ (it is missing or older than the sources)…\n');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
