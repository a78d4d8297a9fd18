/**
 * Keyhall's own modules as production runs them: compiled by `tsc` into dist/ (`npm start` runs
 * `node dist/main.js`), not the TypeScript sources through tsx. tsx's transform adds work that
 * production never does (esbuild's `__name` helper: an Object.defineProperty for every named
 * closure created, on every request), so the bench would measure the loader, not Keyhall.
 * bench/run.ts builds dist/ first when it is older than the sources (scripts/build-if-stale.mjs).
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/** `dist/<module>`, typed as its source: `compiled<typeof import('../src/server.js')>('server.js')`. */
export async function compiled<T>(module: string): Promise<T> {
  return (await import(pathToFileURL(path.join(dist, module)).href)) as T;
}
