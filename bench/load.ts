/** Runs the autocannon CLI in its own process (so it does not share the server's event loop). */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const AUTOCANNON = path.join(path.dirname(require.resolve('autocannon/package.json')), 'autocannon.js');

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests completed in the run. */
  total: number;
  /** CPU time of this process (the server under test) per completed request, in µs. */
  cpuMicrosPerRequest?: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  durationSeconds: number;
  connections: number;
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const args = [AUTOCANNON, '-j', '-c', String(spec.connections), '-d', String(spec.durationSeconds), '-m', spec.method];
  for (const [k, v] of Object.entries(spec.headers)) args.push('-H', `${k}=${v}`);
  if (spec.body !== undefined) args.push('-b', spec.body);
  args.push(spec.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}: ${err}`));
      const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
      resolve({ requestsPerSecond: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
    });
  });
}

/**
 * runLoad, also measuring the CPU time this process (where the server under test runs) spends
 * per request: a figure that other load on the machine disturbs far less than throughput.
 */
export async function runMeasuredLoad(spec: LoadSpec): Promise<LoadResult> {
  const before = process.cpuUsage();
  const result = await runLoad(spec);
  const used = process.cpuUsage(before);
  return { ...result, cpuMicrosPerRequest: result.total > 0 ? (used.user + used.system) / result.total : undefined };
}
