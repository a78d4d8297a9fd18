/** What a hosted page answers: the sign-in engine's outcome rendered, an error page, or a redirect. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookieNames, cookieOptions } from '../../screens/cookies.js';
import type { Html } from '../../screens/html.js';
import { type MessageKey, textOf } from '../../screens/i18n/index.js';
import { challengePage } from '../../screens/mfa/pages.js';
import { activatePage, deviceConsentPage, deviceDonePage } from '../../screens/device-pages.js';
import { consentPage, errorPage, loginPage } from '../../screens/pages.js';
import type { PageFrame } from '../../screens/pages.js';
import type { Render, SigninOutcome } from '../../signin/outcome.js';
import { SAML_OUTCOME_TTL_SECONDS, SSO_STATE_TTL_SECONDS } from '../../sso/service.js';
import { logProtocolRefusal, toAppError } from '../errors.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor } from './csrf.js';
import { setSessionCookie } from './session-cookie.js';

/** Renders any error as an HTML page with its status and code (the JSON renderer's HTML twin). */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, err: unknown): Promise<FastifyReply> {
  const e = toAppError(err, request);
  logProtocolRefusal(request, e.status, e.code);
  for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
  return sendPage(reply, e.status, { title: 'title.error' }, (f) => errorPage(f, e.code, e.description));
}

export const seeOther = (reply: FastifyReply, location: string) => reply.code(303).header('location', location).send();

const TITLES: Record<Render['page'], MessageKey> = {
  login: 'title.sign_in',
  consent: 'title.consent',
  challenge: 'title.challenge',
  activate: 'title.activate',
  device_consent: 'title.consent',
  device_done: 'title.activate',
};

function body(o: Render, csrf: string): (f: PageFrame) => Html {
  switch (o.page) {
    case 'login':
      return (f) => loginPage(f, { csrf, ...o.data, message: textOf(f.t, o.data.message) });
    case 'consent':
      return (f) => consentPage(f, { csrf, ...o.data });
    case 'challenge':
      return (f) => challengePage(f, { csrf, ...o.data, message: textOf(f.t, o.data.message) });
    case 'activate':
      return (f) => activatePage(f, { csrf, ...o.data, message: textOf(f.t, o.data.message) });
    case 'device_consent':
      return (f) => deviceConsentPage(f, { csrf, ...o.data });
    case 'device_done':
      return (f) => deviceDonePage(f, o.data);
  }
}

/** Sends an outcome of the sign-in engine (src/signin/outcome.ts). */
export async function sendSignin(request: FastifyRequest, reply: FastifyReply, outcome: SigninOutcome): Promise<FastifyReply> {
  if (outcome.session) setSessionCookie(request, reply, outcome.session.token, outcome.session.maxAgeSeconds);
  switch (outcome.kind) {
    case 'render': {
      if (outcome.retryAfterSeconds !== undefined) reply.header('retry-after', String(outcome.retryAfterSeconds));
      const csrf = csrfFor(request, reply);
      return sendPage(
        reply,
        outcome.status,
        {
          title: TITLES[outcome.page],
          uiLocales: outcome.uiLocales,
          brand: outcome.brand,
          formTargets: outcome.formTargets,
          // Only the pages with passkey buttons load /webauthn.js.
          script: outcome.page === 'login' || outcome.page === 'challenge',
        },
        body(outcome, csrf),
      );
    }
    case 'redirect':
      return seeOther(reply, outcome.location);
    case 'upstream': {
      const issuer = tenantOf(request).issuer;
      reply.setCookie(cookieNames(issuer).sso, outcome.browser, cookieOptions(issuer, SSO_STATE_TTL_SECONDS + SAML_OUTCOME_TTL_SECONDS));
      return seeOther(reply, outcome.location);
    }
    case 'fail':
      return sendErrorPage(request, reply, outcome.error);
  }
}
