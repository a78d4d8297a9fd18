/** Where a sign-in comes from and returns to: its stored flow (an /authorize request) or a page's `return_to`. */
import type { LoadedFlow } from '../oauth/authorize/engine.js';
import type { Entry, SigninFlowRecord } from './flows.js';

/** The context a hosted page submits, unchecked: the flow handle and the `return_to`. */
export interface FlowRef {
  flow?: string;
  returnTo?: string;
}

export interface OpenFlow {
  /** `flw_…`, what the browser carries. */
  handle: string;
  hash: string;
  record: SigninFlowRecord;
  /** The /authorize request it returns a code for. */
  authorize: LoadedFlow;
}

export interface Ctx {
  entry: Entry;
  /** A same-tenant path (checked). */
  returnTo?: string;
  flow?: OpenFlow;
}

/** A hosted page's URL carrying the context (flow handle, return_to). */
export function pageUrl(path: string, ctx: Pick<Ctx, 'returnTo'> & { flow?: { handle: string } }): string {
  const q = new URLSearchParams({ ...(ctx.flow ? { flow: ctx.flow.handle } : {}), ...(ctx.returnTo ? { return_to: ctx.returnTo } : {}) }).toString();
  return q ? `${path}?${q}` : path;
}
