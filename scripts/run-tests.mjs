#!/usr/bin/env node
// Runs every test file under test/ with node:test (TypeScript through tsx).
// KEYHALL_TEST_DB=postgres runs the same suite on PostgreSQL (see test/helpers/server.ts).
// Extra arguments are file filters: `npm test -- discovery` runs files whose path contains it.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return collect(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const filters = process.argv.slice(2);
const files = collect('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  // --test-force-exit: a test file whose tests have all finished exits even if a test left a
  // handle open (a listening test receiver was once seen to keep webhooks/dispatch.test.ts alive
  // on PostgreSQL, about one run in four), instead of hanging the run until CI's time limit.
  ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
