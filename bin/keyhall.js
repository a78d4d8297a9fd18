#!/usr/bin/env node
// The `keyhall` command. Runs the compiled CLI (npm run build creates dist/).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('keyhall: dist/ is missing; run `npm run build` first.\n');
  process.exit(1);
}
await import(entry.href);
