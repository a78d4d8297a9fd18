/** ETags (weak, the resource version) and retries of compare-and-set conflicts. */
import { ScimError, scimErrors } from './errors.js';

/** If-Match: `*` or a list of ETags; a mismatch is 412. */
export function checkIfMatch(ifMatch: string | undefined, version: number): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags.includes('*') || tags.includes(`"${version}"`)) return;
  throw scimErrors.preconditionFailed('the resource has changed (If-Match does not match its ETag)');
}

const isRetry = (err: unknown) => err instanceof ScimError && err.status === 409 && err.detail === 'retry';

/** Re-runs a transaction whose compare-and-set lost a race (another instance wrote first). */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isRetry(err) || i >= attempts) throw isRetry(err) ? scimErrors.preconditionFailed('the resource changed concurrently; retry') : err;
    }
  }
}
