import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Api } from '../helpers/v1.js';
import type { TestServer } from '../helpers/server.js';

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/import');
export const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

/** Firebase's documented project parameters (github.com/firebase/scrypt README). */
export const FIREBASE_HASH_CONFIG = {
  signer_key: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  salt_separator: 'Bw==',
  rounds: 8,
  mem_cost: 14,
};

/** A job as /v1 shows it. */
export interface Job {
  id: string;
  status: string;
  dry_run?: boolean;
  include_secrets?: boolean;
  counts: Record<string, number>;
  error: string;
}

/** Polls a job until it is no longer running. */
export async function finished(api: Api, path: string): Promise<Job> {
  for (let i = 0; i < 600; i++) {
    const r = await api('GET', path);
    assert.equal(r.status, 200, r.text);
    const job = r.json();
    if (job.status !== 'running') return job;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${path} still running`);
}

/** Starts an import and waits for it: the finished job. */
export async function importFile(api: Api, body: Record<string, unknown>): Promise<Job> {
  const r = await api('POST', '/imports', body);
  assert.equal(r.status, 202, r.text);
  assert.match(r.json().id, /^imp_[0-9a-z]{26}$/);
  return finished(api, `/imports/${r.json().id}`);
}

/** The user's stored hash (read through the server's own storage). */
export async function storedHash(s: TestServer, tenantId: string, email: string): Promise<string | null> {
  const [u] = await s.server.ctx.management.users.list(tenantId, undefined, 1, email);
  assert.ok(u, `no user ${email}`);
  return u.passwordHash;
}
