/**
 * Who the upstream says the person is. An OpenID provider says it in the ID token (`sub`,
 * `email`, `email_verified`); a generic OAuth 2.0 provider in its userinfo JSON, under fields a
 * provider declares by path (`id`, `emails[0].value`, `data.user.email`).
 */

/** Where a generic provider's userinfo document keeps each attribute. */
export interface ProfilePaths {
  subject: string;
  email?: string;
  emailVerified?: string;
  name?: string;
}

export interface UpstreamIdentity {
  /** The upstream's stable id of the person; numbers (GitHub's `id`) are read as their decimal text. */
  subject: string | null;
  email: string | null;
  /** True only when the upstream says so with a boolean `true` (or the string "true"). */
  emailVerified: boolean;
  name: string | null;
}

const STEP = /^([A-Za-z0-9_$-]+)((?:\[\d+\])*)$/;

export class FieldPathError extends Error {
  override name = 'FieldPathError';
}

/** The steps of a path: names separated by dots, each optionally followed by `[index]`s. */
export function parseFieldPath(path: string): Array<string | number> {
  if (path.length === 0 || path.length > 200) throw new FieldPathError(`"${path.slice(0, 50)}" is not a field path`);
  const steps: Array<string | number> = [];
  for (const part of path.split('.')) {
    const m = STEP.exec(part);
    if (!m) throw new FieldPathError(`"${path}" is not a field path (e.g. id, emails[0].value)`);
    steps.push(m[1]!);
    for (const index of m[2]!.matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

/** The value at `path` in `doc`, or undefined when any step is missing. Own properties only. */
export function readFieldPath(doc: unknown, path: string): unknown {
  let at: unknown = doc;
  for (const step of parseFieldPath(path)) {
    if (typeof step === 'number') {
      if (!Array.isArray(at) || step >= at.length) return undefined;
      at = at[step];
    } else {
      if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, step)) return undefined;
      at = (at as Record<string, unknown>)[step];
    }
  }
  return at;
}

const text = (v: unknown, max: number): string | null => {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : null;
};

/** The identity in a generic provider's userinfo document, by the provider's declared paths. */
export function readProfile(doc: Record<string, unknown>, paths: ProfilePaths): UpstreamIdentity {
  const verified = paths.emailVerified === undefined ? undefined : readFieldPath(doc, paths.emailVerified);
  return {
    subject: text(readFieldPath(doc, paths.subject), 255),
    email: paths.email === undefined ? null : text(readFieldPath(doc, paths.email), 254),
    emailVerified: verified === true || verified === 'true',
    name: paths.name === undefined ? null : text(readFieldPath(doc, paths.name), 200),
  };
}
