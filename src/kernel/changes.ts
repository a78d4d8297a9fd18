import { isDeepStrictEqual } from 'node:util';

/**
 * The part of a patch that sets a value other than the current one: what an update changes.
 * An empty result means the update is a no-op — nothing is written, `updated_at` stays and no
 * event is recorded (docs/api.md).
 */
export function changesOf<P extends object>(current: { [K in keyof P]?: unknown }, patch: P): Partial<P> {
  const changes: Partial<P> = {};
  for (const k of Object.keys(patch) as Array<keyof P>) {
    if (patch[k] !== undefined && !isDeepStrictEqual(patch[k], current[k])) changes[k] = patch[k];
  }
  return changes;
}
