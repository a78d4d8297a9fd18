/**
 * The sign-in engine's flows: a `flw_…` handle the hosted pages carry, its entry point, where it
 * returns, and the step it reached. Framework-free; src/storage/repos/signin-engine-flows.ts
 * implements the port.
 */

export const SIGNIN_FLOW_PREFIX = 'flw_';

/**
 * Ways into a sign-in. `authorize` (/authorize, PAR included) has a stored flow that returns a
 * code to the client's redirect_uri; `account` (a self-service page such as /sessions or /mfa,
 * or /connect, named by a same-tenant `return_to`) has none: it returns to that page; `device`
 * (a user code entered at /activate, RFC 8628) has a stored flow that returns to the approval
 * page of that device authorization.
 */
export type Entry = 'authorize' | 'account' | 'device';

/** The steps of src/signin/steps.ts a stored flow records having reached. */
export type StepName = 'route' | 'first_factor' | 'second_factor' | 'enrol' | 'consent' | 'complete';

export interface SigninFlowRecord {
  tenantId: string;
  entry: Entry;
  /** SHA-256 of the /authorize flow (`fl_…`) an `authorize` flow returns to. */
  authorizeFlowHash: string | null;
  /** SHA-256 of the device_code a `device` flow approves or denies. */
  deviceCodeHash: string | null;
  step: StepName;
  version: number;
  createdAt: number;
  expiresAt: number;
  completedAt: number | null;
}

export interface SigninFlowStore {
  insert(flowHash: string, flow: SigninFlowRecord): Promise<void>;
  find(tenantId: string, flowHash: string): Promise<SigninFlowRecord | undefined>;
  /** Compare-and-set: moves an open, unexpired flow seen at `version` to `step` (version + 1). */
  advance(tenantId: string, flowHash: string, version: number, step: StepName, now: number): Promise<boolean>;
  /** Compare-and-set: completes an open flow seen at `version`; false when another request moved it first. */
  complete(tenantId: string, flowHash: string, version: number, now: number): Promise<boolean>;
}
