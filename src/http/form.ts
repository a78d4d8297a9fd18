/** Form and query values of hosted pages (the protocol endpoints read theirs in src/oauth/params.ts). */
import { type RawParams, readParam } from '../oauth/params.js';

export type Form = RawParams;

/** One form or query value; empty or repeated counts as absent. */
export function field(source: unknown, name: string): string | undefined {
  return readParam(source as RawParams | undefined, name);
}
