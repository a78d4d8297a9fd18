/** Where a sign-in comes from and returns to: its stored flow (an /authorize request) or a page's `return_to`. */
import type { LoadedFlow } from '../oauth/authorize/engine.js';
import type { LoadedDevice } from '../oauth/device/verification.js';
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

/** A stored flow of the `device` entry: the device authorization (RFC 8628) it approves or denies. */
export interface OpenDevice {
  /** `flw_…`, what the browser carries. */
  handle: string;
  hash: string;
  record: SigninFlowRecord;
  device: LoadedDevice;
}

export interface Ctx {
  entry: Entry;
  /** A same-tenant path (checked). */
  returnTo?: string;
  flow?: OpenFlow;
  /** The `device` entry's flow. */
  device?: OpenDevice;
}

/** The handle of the context's stored flow (of any entry), if it has one. */
export const flowHandle = (ctx: Pick<Ctx, 'flow' | 'device'>): string | undefined => ctx.flow?.handle ?? ctx.device?.handle;

/** A hosted page's URL carrying the context (flow handle, return_to). */
export function pageUrl(path: string, ctx: Pick<Ctx, 'returnTo'> & { flow?: { handle: string }; device?: { handle: string } }): string {
  const handle = ctx.flow?.handle ?? ctx.device?.handle;
  const q = new URLSearchParams({ ...(handle ? { flow: handle } : {}), ...(ctx.returnTo ? { return_to: ctx.returnTo } : {}) }).toString();
  return q ? `${path}?${q}` : path;
}
