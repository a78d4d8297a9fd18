/**
 * Users imported per second (issue 33): a JSONL file of BENCH_IMPORT_USERS users (default
 * 100,000; 10,000 with BENCH_QUICK=1), each with a bcrypt hash, imported into a fresh SQLite
 * tenant through the same path as `keyhall import users` (batches of 500, one transaction each).
 * No argon2 runs at import: hashes are stored as they come. Run alone with
 * `npx tsx bench/import.ts`, or as the last part of `npm run bench`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/index.js';
import { createContext } from '../src/context.js';

const quick = process.env.BENCH_QUICK === '1';
const dirBytes = (d: string): number =>
  fs
    .readdirSync(d, { withFileTypes: true })
    .reduce((a, e) => a + (e.isDirectory() ? dirBytes(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0);
const n = Number(process.env.BENCH_IMPORT_USERS ?? (quick ? 10_000 : 100_000));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-bench-import-'));
try {
  const ctx = await createContext(loadConfig({ KEYHALL_DATA_DIR: dir }, { bootstrap: 'false', logLevel: 'silent' }));
  try {
    const { tenant } = await ctx.tenants.create({ host: 'import.bench.test' });
    const hash = bcrypt.hashSync('bench password', 10);
    const file = Buffer.from(
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ id: `u${i}`, email: `user${i}@bench.test`, email_verified: true, name: `User ${i}`, password_hash: hash }),
      ).join('\n'),
    );
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.db.kysely);
    const emptyBytes = dirBytes(dir);
    const started = performance.now();
    const job = await ctx.management.transfers.importNow(tenant.id, { type: 'system', id: null }, file, {
      format: 'jsonl',
      dryRun: false,
      allowLegacySha: false,
    });
    const seconds = (performance.now() - started) / 1000;
    if (job.status !== 'succeeded' || job.counts.created !== n) throw new Error(`import ${job.status}: ${JSON.stringify(job.counts)}`);
    // What the users take on disk (the sizing guide's storage per 100,000 users): the SQLite
    // files after a checkpoint, less the empty tenant's.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.db.kysely);
    const mbPer100k = (((dirBytes(dir) - emptyBytes) / n) * 100_000) / 1024 / 1024;
    console.log(
      `\n### Import\n\n| users (JSONL, bcrypt hashes) | seconds | users/s | SQLite MB per 100,000 users |\n|---|---|---|---|\n| ${n} | ${seconds.toFixed(1)} | ${Math.round(n / seconds)} | ${mbPer100k.toFixed(0)} |`,
    );
  } finally {
    await ctx.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
