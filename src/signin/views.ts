/** The pages a sign-in step renders, with their data, brand and form targets (outcome.ts). */
import { minimumAcr } from '../oauth/authorize/acr.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { OAuthTenant } from '../oauth/types.js';
import type { Message } from '../screens/i18n/index.js';
import type { MfaService } from '../screens/mfa/service.js';
import type { SigninService } from '../screens/service.js';
import type { EmailSigninService } from '../signup/service.js';
import type { SocialSigninService } from '../social/service.js';
import type { SsoSigninService } from '../sso/service.js';
import { type Ctx, flowHandle, type OpenDevice, type OpenFlow } from './context.js';
import type { ActivateView, ChallengeView, LoginView, SigninOutcome } from './outcome.js';

export interface ViewDeps {
  signin: Pick<SigninService, 'brand'>;
  mfa: Pick<MfaService, 'factors'>;
  sso: Pick<SsoSigninService, 'offered'>;
  /** Social sign-in: the login page's buttons. */
  social?: Pick<SocialSigninService, 'buttons'>;
  /** Sign-up and passwordless sign-in by email: what the login page offers. */
  emailSignin?: Pick<EmailSigninService, 'offers'>;
}

/** The brand, form targets and languages of a page of this context (the flow's organization, redirect_uri and ui_locales). */
async function frame(deps: ViewDeps, tenant: OAuthTenant, ctx: Pick<Ctx, 'flow'>) {
  const request = ctx.flow?.authorize.flow.request;
  return {
    brand: await deps.signin.brand(tenant.id, request?.organizationId),
    formTargets: request ? [request.redirectUri] : [],
    uiLocales: request?.uiLocales ?? null,
  };
}

const retry = (seconds: number | undefined) => (seconds !== undefined ? { retryAfterSeconds: seconds } : {});

/** The login page; `sso`: say that single sign-on is offered when it is (the password form's pages). */
export async function loginView(
  deps: ViewDeps,
  tenant: OAuthTenant,
  ctx: Ctx,
  status: number,
  data: Pick<LoginView['data'], 'email' | 'message' | 'verifyEmail'>,
  opts: { sso: boolean; retryAfterSeconds?: number },
): Promise<SigninOutcome> {
  return {
    kind: 'render',
    page: 'login',
    status,
    ...(await frame(deps, tenant, ctx)),
    data: {
      ...data,
      flow: flowHandle(ctx),
      returnTo: ctx.returnTo,
      clientName: ctx.flow?.authorize.client.clientName ?? ctx.device?.device.client.clientName ?? undefined,
      ...(opts.sso ? { ssoHint: await deps.sso.offered(tenant.id) } : {}),
      ...(deps.social ? { social: await deps.social.buttons(tenant.id) } : {}),
      ...(deps.emailSignin ? await deps.emailSignin.offers(tenant.id) : {}),
    },
    ...retry(opts.retryAfterSeconds),
  };
}

/** The second-factor challenge: the user's factors, or enrolment when they have none. */
export async function challengeView(
  deps: ViewDeps,
  tenant: OAuthTenant,
  ctx: Ctx,
  pending: SessionRecord,
  status: number,
  message?: Message,
  retryAfterSeconds?: number,
): Promise<SigninOutcome> {
  const f = await deps.mfa.factors(tenant.id, pending.userId);
  const data: ChallengeView['data'] = {
    flow: flowHandle(ctx),
    returnTo: ctx.returnTo,
    totp: f.totp,
    passkeys: f.passkeys.length > 0,
    enrol: !f.totp && f.passkeys.length === 0,
    passkeyOnly: minimumAcr(ctx.flow?.authorize.flow.request.acrValues) === 'phr',
    ...(message ? { message } : {}),
  };
  return { kind: 'render', page: 'challenge', status, ...(await frame(deps, tenant, ctx)), data, ...retry(retryAfterSeconds) };
}

/** The consent page of an /authorize flow. */
export async function consentView(deps: ViewDeps, tenant: OAuthTenant, flow: OpenFlow): Promise<SigninOutcome> {
  const { request } = flow.authorize.flow;
  const client = flow.authorize.client;
  return {
    kind: 'render',
    page: 'consent',
    status: 200,
    ...(await frame(deps, tenant, { flow })),
    data: { flow: flow.handle, clientName: client.clientName ?? client.id, scopes: request.scopes, resources: request.resources },
  };
}

/** /activate: the user code form (prefilled from verification_uri_complete, still to be confirmed). */
export async function activateView(
  deps: ViewDeps,
  tenant: OAuthTenant,
  status: number,
  data: ActivateView['data'],
  retryAfterSeconds?: number,
): Promise<SigninOutcome> {
  return { kind: 'render', page: 'activate', status, ...(await frame(deps, tenant, {})), data, ...retry(retryAfterSeconds) };
}

/** The approval page of a device authorization: its client and scopes. */
export async function deviceConsentView(deps: ViewDeps, tenant: OAuthTenant, open: OpenDevice): Promise<SigninOutcome> {
  const { authorization, client } = open.device;
  return {
    kind: 'render',
    page: 'device_consent',
    status: 200,
    ...(await frame(deps, tenant, {})),
    data: {
      flow: open.handle,
      clientName: client.clientName ?? client.id,
      scopes: authorization.scopes,
      resources: authorization.resources,
    },
  };
}

/** The device was approved (or denied): the person goes back to it. */
export async function deviceDoneView(deps: ViewDeps, tenant: OAuthTenant, approved: boolean): Promise<SigninOutcome> {
  return { kind: 'render', page: 'device_done', status: 200, ...(await frame(deps, tenant, {})), data: { approved } };
}
