/**
 * Runs the examples of examples/ as a user of the published SDK would (issue 34): `npm pack` of
 * packages/sdk, freshly compiled, then each example copied to a
 * fresh folder outside the repository, its dependencies and the packed tarball installed there
 * from the npm cache, and the example started from that folder.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { root, type Running, track } from '../guides/guide.js';

const run = promisify(execFile);
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/**
 * The SDK's tarball, as `npm pack` makes it for the registry. Its prepack (`build`) regenerates
 * the API types from the server before compiling; `npm run typecheck` has done that already, and
 * the types do not change the compiled code, so here the SDK is compiled afresh and the types
 * generated only when missing (a tree copied without ignored files, as CI's Node 24 leg).
 */
export async function packSdk(): Promise<string> {
  const sdk = path.join(root, 'packages/sdk');
  const opts = { cwd: sdk, maxBuffer: 16 << 20 };
  await run('npm', ['run', existsSync(path.join(sdk, 'src/generated/management.ts')) ? 'compile' : 'build', '--silent'], opts);
  const dest = mkdtempSync(path.join(os.tmpdir(), 'keyhall-sdk-pack-'));
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dest, ...NPM_QUIET], opts);
  const tarballs = readdirSync(dest).filter((f) => f.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`npm pack left ${tarballs.join(', ') || 'nothing'} in ${dest}`);
  return path.join(dest, tarballs[0]!);
}

/**
 * examples/<name> in a fresh folder, with its runtime dependencies and the SDK tarball installed
 * (from the npm cache; `--prefer-offline` asks the registry only for what the cache lacks).
 */
export async function installExample(name: string, tarball?: string): Promise<string> {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'keyhall-example-')), name);
  cpSync(path.join(root, 'examples', name), dir, { recursive: true, filter: (src) => !src.includes('node_modules') });
  await run('npm', ['install', '--prefer-offline', '--omit=dev', '--no-save', ...NPM_QUIET, ...(tarball ? [tarball] : [])], { cwd: dir, maxBuffer: 16 << 20 });
  return dir;
}

/** The repository's tsx, to run an example's TypeScript (examples list tsx as a dev dependency). */
const TSX = import.meta.resolve('tsx');

/** Starts `<file>` of an installed example (in its own process group). */
export function startExample(dir: string, file: string, env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', TSX, file], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return track(child, `${path.basename(dir)}/${file}`);
}
