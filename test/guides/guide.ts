/**
 * The kit that runs a guide of docs/guides/ as a newcomer would, against a real `keyhall serve`
 * (issue 27, item 11). A guide marks what its test runs with HTML comments, invisible on GitHub:
 *
 * - `<!-- test: name -->` before a fenced `sh` block: a command the test runs with bash, as
 *   written, except that the guide's fixed addresses (`localhost:3000`, the app's port) are
 *   replaced by the ports this test run uses. Values a reader copies from an earlier answer
 *   (`CLIENT_ID=…`) are passed as environment variables of the same name.
 * - `<!-- file: docs/guides/x/y.ts -->` before a fenced block: the block must be that file,
 *   byte for byte, so the guide shows exactly the code its test runs.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';

export const root = path.resolve(import.meta.dirname, '../..');

interface Block {
  marker: string;
  text: string;
}

/** Every marked fenced block of a guide, in order. */
function markedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const re = /<!-- ((?:test|file): [^\s]+) -->\n```[a-z]*\n([\s\S]*?)```\n/g;
  for (const m of markdown.matchAll(re)) blocks.push({ marker: m[1]!, text: m[2]! });
  return blocks;
}

/** A free TCP port on 127.0.0.1 (for an app the guide runs on a fixed port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until `fn` holds (polling every 50 ms). */
export async function until(fn: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A long-running command of a guide (an app, a receiver), in its own process group. */
export interface Running {
  output: () => string;
  /** Resolves once a line of its output matches. */
  waitFor: (pattern: RegExp) => Promise<void>;
  stop: () => Promise<void>;
}

export function track(child: ChildProcess, label: string): Running {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let done = false;
  void exited.then(() => (done = true));
  return {
    output: () => out,
    waitFor: async (pattern) => {
      await until(() => pattern.test(out) || done, `${label}: ${pattern}`);
      assert.match(out, pattern, `${label} exited:\n${out}`);
    },
    stop: async () => {
      if (done) return;
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

/** A guide's Markdown and how to run its marked blocks. */
export class Guide {
  readonly file: string;
  private readonly blocks: Block[];
  /** Fixed addresses of the guide → the ones of this run (`localhost:3000` → `localhost:41234`). */
  readonly addresses = new Map<string, string>();

  constructor(name: string) {
    this.file = path.join(root, 'docs/guides', `${name}.md`);
    this.blocks = markedBlocks(readFileSync(this.file, 'utf8'));
  }

  /** The text of the block marked `test: name`, with this run's addresses. */
  command(name: string): string {
    const block = this.blocks.find((b) => b.marker === `test: ${name}`);
    assert.ok(block, `${this.file} has no block marked <!-- test: ${name} -->`);
    let text = block.text;
    for (const [from, to] of this.addresses) text = text.replaceAll(from, to);
    return text;
  }

  /** Every `file:` block is its file on disk; returns the files. */
  assertFilesShown(): string[] {
    const files = this.blocks.filter((b) => b.marker.startsWith('file: ')).map((b) => ({ ...b, path: b.marker.slice('file: '.length) }));
    for (const f of files) assert.equal(f.text, readFileSync(path.join(root, f.path), 'utf8'), `${this.file} shows ${f.path} as it is`);
    return files.map((f) => f.path);
  }

  /** Runs a `test:` block with bash (errors stop it) and returns what it printed. */
  sh(name: string, env: Record<string, string>): Promise<string> {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', this.command(name)], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise((resolve, reject) =>
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`guide step ${name} exited ${code}: ${err}${out}`)))),
    );
  }

  /** Runs a `test:` block that prints JSON, and parses it. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async json(name: string, env: Record<string, string>): Promise<any> {
    const out = await this.sh(name, env);
    try {
      return JSON.parse(out);
    } catch {
      throw new Error(`guide step ${name} did not print JSON: ${out}`);
    }
  }

  /** Starts a long-running `test:` block (an app, a receiver). */
  start(name: string, env: Record<string, string>): Running {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', `exec ${this.command(name)}`], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return track(child, name);
  }
}

/** The quick start's server: `keyhall serve` on an empty database, its tenant and API key. */
export interface Keyhall {
  /** `http://localhost:<port>`, the bootstrap tenant's issuer. */
  issuer: string;
  host: string;
  apiKey: string;
  /** Stops the server and starts it again on the same port and database with extra settings. */
  restart: (env: Record<string, string>) => Promise<void>;
  /** What the running server printed. */
  output: () => string;
  /** Stops it (SIGTERM) and removes its data; the exit code (0: a clean shutdown). */
  close: () => Promise<number | null>;
}

/** Starts it; `settings` are environment variables of the first start (`KEYHALL_EGRESS_ALLOW`). */
export async function startKeyhall(settings: Record<string, string> = {}): Promise<Keyhall> {
  const { env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'warn' });
  const launch = (args: string[], extra: Record<string, string>) => {
    const child = spawnServer(args, { ...env, ...extra });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    return { child, exited, out: () => out };
  };
  let server = launch(['--port', '0'], settings);
  await until(() => /API key\s+sk_live_\S+/.test(server.out()) && /Listening at/.test(server.out()), 'the first start');
  const issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(server.out())![1]!;
  const apiKey = /API key\s+(sk_live_\S+)/.exec(server.out())![1]!;
  const stop = async () => {
    server.child.kill('SIGTERM');
    return server.exited;
  };
  return {
    issuer,
    host: new URL(issuer).host,
    apiKey,
    restart: async (extra) => {
      await stop();
      server = launch(['--port', new URL(issuer).port], extra);
      await until(() => /Listening at/.test(server.out()), 'the restart');
    },
    output: () => server.out(),
    close: async () => {
      const code = await stop();
      await cleanup();
      return code;
    },
  };
}
