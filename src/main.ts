import { runCli } from './cli/index.js';

// Process entry: `node dist/main.js <command>`; with no command it prints the usage (exit 2).
const code = await runCli(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
