/**
 * The steps of a sign-in, in order, one row each, with a column per entry point (as
 * node-oidc-provider's actions/authorization/index.js lists its checks). Every transition of the
 * engine ends by walking this table from the top with what the browser now has; the first step
 * that answers decides the outcome, the others say `next`. A null column: the step does not apply
 * to that entry point.
 *
 * Routing to an SSO connection (home-realm discovery) is where the person identifies — the login
 * page and its form — so it is not a row here but `routeByHint`/`routeByEmail` in engine.ts.
 * There is no organization choice yet; the OAuth core decides consent and completion together
 * (src/oauth/authorize/engine.ts, continueFlow), so the `authorize` column's last row wraps it.
 */
import { type Outcome as AuthorizeOutcome, sessionSatisfies } from '../oauth/authorize/engine.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { Entry, StepName } from './flows.js';
import { type SigninOutcome, redirect } from './outcome.js';
import { type Ctx, pageUrl } from './context.js';

export interface StepState {
  ctx: Ctx;
  /** A usable session (its second factor given, if one was owed). */
  session?: SessionRecord;
  /** A sign-in that passed its first factor and still owes the second. */
  pending?: SessionRecord;
  /** The person just approved this flow on the consent page. */
  consented: boolean;
}

export interface StepPorts {
  hasSecondFactor(userId: string): Promise<boolean>;
  /** A usable session is strong enough for the MFA policy that applies to its user now (a single-factor one may not be, since a policy change). */
  meetsMfaPolicy(session: SessionRecord): Promise<boolean>;
  /** The OAuth core's continuation of the flow (consent, then the code). */
  continueAuthorization(state: StepState & { session: SessionRecord }): Promise<AuthorizeOutcome>;
  /** Maps an outcome of the OAuth core to the engine's (completing the flow on a redirect to the client). */
  fromAuthorization(ctx: Ctx, outcome: AuthorizeOutcome): Promise<SigninOutcome>;
}

export type StepResult = { kind: 'next' } | SigninOutcome;
type Step = (s: StepState, ports: StepPorts) => Promise<StepResult>;

const next: StepResult = { kind: 'next' };
const toLogin = (s: StepState) => redirect(pageUrl('/login', s.ctx));
const toChallenge = (s: StepState) => redirect(pageUrl('/mfa/challenge', s.ctx));

/** A first factor is done when the browser has a session, or a sign-in owing its second factor. */
const firstFactorForPage: Step = async (s) => (s.session || s.pending ? next : toLogin(s));

/** …and for /authorize, a usable session must also be recent and strong enough (prompt, max_age, acr_values). */
const firstFactorForAuthorize: Step = async (s) => {
  if (s.pending) return next;
  return s.ctx.flow && sessionSatisfies(s.ctx.flow.authorize.flow, s.session) ? next : toLogin(s);
};

/**
 * …and for the device approval, a usable session must also meet the MFA policy that applies now:
 * /authorize asks the same of its sessions (continueFlow), so a single-factor session from before
 * the tenant required a second factor signs in again rather than approving a device.
 */
const firstFactorForDevice: Step = async (s, ports) => {
  if (s.pending) return next;
  return s.session && (await ports.meetsMfaPolicy(s.session)) ? next : toLogin(s);
};

/** A sign-in owing a second factor its user has: the challenge. */
const secondFactor: Step = async (s, ports) => (s.pending && (await ports.hasSecondFactor(s.pending.userId)) ? toChallenge(s) : next);

/** A sign-in owing a second factor its user does not have yet (the policy's `required`, a step-up): enrol one on the challenge page. */
const enrolment: Step = async (s) => (s.pending ? toChallenge(s) : next);

/** Consent (when the client needs it) and the code to the redirect_uri, by the OAuth core. */
const completeAuthorization: Step = async (s, ports) => {
  if (!s.session) return toLogin(s);
  return ports.fromAuthorization(s.ctx, await ports.continueAuthorization({ ...s, session: s.session }));
};

/** The device authorization's approval page (the person sees the client and scopes and decides there). */
const completeDevice: Step = async (s) => (s.session ? redirect(pageUrl('/activate/confirm', s.ctx)) : toLogin(s));

/** Back to the page that asked for the sign-in. */
const completePage: Step = async (s) => redirect(s.ctx.returnTo ?? '/sessions');

export const STEPS: ReadonlyArray<{ name: StepName } & Record<Entry, Step | null>> = [
  { name: 'first_factor', authorize: firstFactorForAuthorize, account: firstFactorForPage, device: firstFactorForDevice },
  { name: 'second_factor', authorize: secondFactor, account: secondFactor, device: secondFactor },
  { name: 'enrol', authorize: enrolment, account: enrolment, device: enrolment },
  { name: 'complete', authorize: completeAuthorization, account: completePage, device: completeDevice },
];

/** The one resume path: the first step that answers (the last row always does). */
export async function walk(s: StepState, ports: StepPorts): Promise<SigninOutcome> {
  for (const row of STEPS) {
    const step = row[s.ctx.entry];
    if (!step) continue;
    const r = await step(s, ports);
    if (r.kind !== 'next') return r;
  }
  throw new Error(`the steps of entry ${s.ctx.entry} ended without an outcome`);
}
