/**
 * Runs the examples of examples/ as a user of the published SDK would (issue 34): `npm pack` of
 * packages/sdk (its prepack generates the API types and compiles), then each example copied to a
 * fresh folder outside the repository, its dependencies and the packed tarball installed there
 * from the npm cache, and the example started from that folder.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { root, type Running, track } from '../guides/guide.js';

const run = promisify(execFile);
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/** The SDK's tarball, as `npm pack` makes it for the registry. */
export async function packSdk(): Promise<string> {
  const dest = mkdtempSync(path.join(os.tmpdir(), 'keyhall-sdk-pack-'));
  await run('npm', ['pack', '--pack-destination', dest, ...NPM_QUIET], { cwd: path.join(root, 'packages/sdk'), maxBuffer: 16 << 20 });
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
  const child = spawn(process.execPath, ['--import', TSX, file], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return track(child, `${path.basename(dir)}/${file}`);
}
