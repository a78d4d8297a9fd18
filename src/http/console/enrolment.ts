/**
 * /console/api/mfa: the signed-in administrator adds a passkey or an authenticator app from the
 * console (the setup page offers both right after the administrator is created). JSON over the
 * very MfaService of the hosted /mfa pages: the same WebAuthn options, verification, AAGUID
 * allowlists and consume-once challenges bound to this browser's CSRF cookie, the same TOTP
 * secrets, code checks, attempt limits, recovery codes and audit events; nothing is
 * re-implemented here. The rules are the hosted pages' too (docs/passkeys.md):
 *
 * - a usable session may add a factor when its login is at most 5 minutes old (`fresh`);
 * - a session still owing its second factor (an MFA policy of `required`) may enrol its first
 *   one, which completes the sign-in;
 * - besides that: the console cookie (console-cookie.ts), an administrator, and the console's
 *   CSRF checks on every POST (api.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ConsoleAdmins } from '../../console/service.js';
import { errors } from '../../kernel/errors.js';
import { amrOfPasskey } from '../../oauth/authorize/acr.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { cookieNames } from '../../screens/cookies.js';
import { browserBinding, type MfaService } from '../../screens/mfa/service.js';
import type { SigninService } from '../../screens/service.js';
import type { UserRecord } from '../../storage/repos/users.js';
import { enrollingSession, sessionToken } from '../screens/session-cookie.js';
import { tenantOf } from '../tenant.js';
import { validatorCompiler } from '../validation.js';
import { requireConsoleCookie } from './console-cookie.js';

export interface EnrolmentOptions {
  signin: SigninService;
  admins: ConsoleAdmins;
  mfa: MfaService;
}

interface Enroller {
  session: SessionRecord;
  user: UserRecord;
  /** The session still owes its (first) second factor. */
  pending: boolean;
}

const STALE = 'sign in again to add a sign-in method (your login is more than 5 minutes old): /login?return_to=/mfa&reauth=1';

export async function enrolmentRoutes(app: FastifyInstance, opts: EnrolmentOptions): Promise<void> {
  const { signin, admins, mfa } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  const binding = (request: FastifyRequest) => browserBinding(request.cookies[cookieNames(tenantOf(request).issuer).csrf]);

  /** The administrator enrolling: a usable session, or a pending one whose user has no factor yet. */
  const enroller = async (request: FastifyRequest, opts: { fresh: boolean }): Promise<Enroller> => {
    const tenant = tenantOf(request);
    const found = await enrollingSession(signin, mfa, request);
    if (!found) throw errors.loginRequired();
    const { session, pending } = found;
    requireConsoleCookie(request, sessionToken(request));
    if (!(await admins.isAdmin(tenant.id, session.userId))) throw errors.forbidden('this account is not an administrator of this tenant');
    if (opts.fresh && !pending && !mfa.fresh(session)) throw errors.forbidden(STALE);
    const user = await signin.user(tenant.id, session.userId);
    if (!user) throw errors.loginRequired();
    return { session, user, pending };
  };

  /** The factor just added completes a pending sign-in. */
  const complete = async (e: Enroller, amr: string[]): Promise<void> => {
    if (e.pending && !(await signin.completeSecondFactor(e.user.tenantId, e.session, amr))) throw errors.loginRequired();
  };

  r.get('/', async (request) => {
    const e = await enroller(request, { fresh: false });
    const f = await mfa.factors(e.user.tenantId, e.user.id);
    return {
      second_factor_required: e.pending,
      fresh: e.pending || mfa.fresh(e.session),
      passkeys: f.passkeys.map((p) => ({ id: p.id, name: p.name, created_at: new Date(p.createdAt).toISOString() })),
      totp: f.totp,
      recovery_codes: f.recoveryCodes,
    };
  });

  /** WebAuthn creation options (the challenge is consumed once, within 5 minutes, by this browser). */
  r.post('/passkeys/options', async (request) => {
    const e = await enroller(request, { fresh: true });
    return mfa.registrationOptions(tenantOf(request), e.user, binding(request));
  });

  r.post('/passkeys', { schema: { body: z.strictObject({ credential: z.looseObject({}), name: z.string().max(100).optional() }) } }, async (request, reply) => {
    const e = await enroller(request, { fresh: true });
    const result = await mfa.registerPasskey(tenantOf(request), e.user, binding(request), JSON.stringify(request.body.credential), request.body.name);
    if (result.kind === 'rejected') throw errors.forbidden(result.message);
    if (result.kind === 'invalid') throw errors.invalidRequest(result.message);
    // User verification was required, so the new passkey is a second factor by itself.
    await complete(e, amrOfPasskey(result.passkey, true));
    return reply
      .code(201)
      .send({ passkey: { id: result.passkey.id, name: result.passkey.name, created_at: new Date(result.passkey.createdAt).toISOString() } });
  });

  /** Starts (or restarts) authenticator-app enrolment: the secret, its otpauth:// URI and QR code (SVG). */
  r.post('/totp', async (request) => {
    const e = await enroller(request, { fresh: true });
    const tenant = tenantOf(request);
    if (!(await mfa.startTotp(tenant.id, e.user.id))) throw errors.conflict('an authenticator app is already set up for this account');
    const enrolment = await mfa.totpEnrolment(tenant.id, e.user, new URL(tenant.issuer).host);
    if (!enrolment) throw errors.conflict('an authenticator app is already set up for this account');
    return { secret: enrolment.secret, otpauth_uri: enrolment.uri, qr_svg: enrolment.svg };
  });

  /** The first code confirms it; the recovery codes come in this answer only (null: unused ones remain). */
  r.post('/totp/confirm', { schema: { body: z.strictObject({ code: z.string().max(20) }) } }, async (request) => {
    const e = await enroller(request, { fresh: true });
    const result = await mfa.confirmTotp(e.user.tenantId, e.user.id, request.body.code);
    if (result.kind === 'limited') throw errors.tooManyRequests(result.retryAfterSeconds);
    if (result.kind === 'invalid')
      throw errors.invalidRequest('that code is not right (or enrolment was not started): enter the current 6-digit code from the app');
    await complete(e, ['otp']);
    return { recovery_codes: result.recoveryCodes };
  });
}
