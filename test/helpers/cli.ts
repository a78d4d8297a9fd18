import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const entry = path.join(root, 'src/main.ts');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `keyhall <args>` as a separate process (TypeScript sources through tsx). */
export function runCli(args: string[], env: Record<string, string>, input?: string): CliResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: { ...process.env, KEYHALL_LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
    ...(input !== undefined ? { input } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `keyhall serve` as a child process. */
export function spawnServer(args: string[], env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', entry, 'serve', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
