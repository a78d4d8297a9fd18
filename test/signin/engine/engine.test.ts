import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import { sha256Hex } from '../../../src/kernel/crypto/hash.js';
import {
  assertion,
  authorizeParams,
  browser,
  callback,
  createUser,
  type EngineWorld,
  failure,
  flowOf,
  location,
  openWorld,
  PASSWORD,
  registerPasskey,
  rendered,
} from './helpers.js';

/**
 * The sign-in engine driven without HTTP: each entry point (/authorize, a page's return_to) with
 * each first factor (password, passkey), a second factor required or optional, and flows
 * replayed, resumed from another browser, or expired. SSO as a first factor runs through the
 * same engine in test/sso/ (it needs an upstream IdP).
 */
describe('sign-in engine', () => {
  let w: EngineWorld;
  before(async () => {
    w = await openWorld();
  });
  after(() => w.close());

  const engine = () => w.ctx.engine;

  /** /authorize in a fresh browser: the login page's flow. */
  async function start(extra: Record<string, string> = {}) {
    const b = browser();
    const flow = flowOf(await engine().authorize(authorizeParams(w, extra), w.tenant, b));
    return { b, flow };
  }

  describe('entry /authorize', () => {
    it('password: the login page, then a code to the redirect_uri with state and iss; the flow is then used up', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      const page = rendered(await engine().showLogin(w.tenant, { flow }, b), 'login');
      assert.equal(page.data.flow, flow);
      assert.deepEqual(page.formTargets, ['https://app.example/cb']);

      const wrong = rendered(await engine().password(w.tenant, { flow }, { email: user.email, password: 'nope' }, b), 'login', 401);
      assert.equal(wrong.data.message, 'login.bad_credentials', 'the catalogue message of a refused password (the same for an unknown email)');
      assert.equal(wrong.session, undefined);

      const done = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      assert.ok(done.session, 'a session cookie is set');
      const params = callback(done);
      assert.match(params.get('code') ?? '', /^ac_/);
      assert.equal(params.get('state'), 'st-1');
      assert.equal(params.get('iss'), w.tenant.issuer);

      // Replayed: the same flow is gone, whatever step is asked of it.
      assert.deepEqual(failure(await engine().showLogin(w.tenant, { flow }, b)), { status: 400, code: 'invalid_request' });
      assert.deepEqual(failure(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b)), {
        status: 400,
        code: 'invalid_request',
      });
      assert.deepEqual(failure(await engine().resume(w.tenant, { flow }, b)), { status: 400, code: 'invalid_request' });
      const stored = await w.ctx.db.kysely.selectFrom('signin_engine_flows').selectAll().where('flow_hash', '=', sha256Hex(flow)).executeTakeFirstOrThrow();
      assert.equal(stored.step, 'complete');
      assert.notEqual(stored.completed_at, null);
    });

    it('passkey: a discoverable passkey signs in and completes the flow with its methods', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      const em = await registerPasskey(w, user.id, b);
      const done = b.take(await engine().passkey(w.tenant, { flow }, await assertion(w, em, b, 'login', null), b));
      assert.match(callback(done).get('code') ?? '', /^ac_/);
      const session = await w.ctx.signin.current(w.tenant.id, b.sessionToken);
      assert.equal(session?.userId, user.id);
      assert.ok(session?.amr?.includes('mfa'), JSON.stringify(session?.amr));
    });

    it('passkey: a refused assertion renders the login page again (401) and starts no session', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      const em = await registerPasskey(w, user.id, b);
      const credential = await assertion(w, em, b, 'login', null);
      // Its challenge is bound to the browser that asked for it.
      const other = browser();
      const refused = rendered(await engine().passkey(w.tenant, { flow }, credential, other), 'login', 401);
      assert.equal(refused.session, undefined);
      assert.equal(refused.data.flow, flow);
    });

    it('a prompt=none request without a session answers login_required to the client, with no flow', async () => {
      const params = callback(await engine().authorize(authorizeParams(w, { prompt: 'none' }), w.tenant, browser()));
      assert.equal(params.get('error'), 'login_required');
      assert.equal(params.get('state'), 'st-1');
    });

    it('an unknown client gets an error page, never a redirect', async () => {
      assert.deepEqual(failure(await engine().authorize({ ...authorizeParams(w), client_id: 'cli_nope' }, w.tenant, browser())), {
        status: 400,
        code: 'invalid_client',
      });
    });
  });

  describe('entry: a page with return_to', () => {
    it('password: back to the same-tenant page; a foreign return_to falls back to /sessions', async () => {
      const user = await createUser(w);
      const b = browser();
      const page = rendered(await engine().showLogin(w.tenant, { returnTo: '/mfa' }, b), 'login');
      assert.equal(page.data.returnTo, '/mfa');
      assert.deepEqual(page.formTargets, []);
      assert.equal(location(b.take(await engine().password(w.tenant, { returnTo: '/mfa' }, { email: user.email, password: PASSWORD }, b))), '/mfa');
      assert.ok(await w.ctx.signin.current(w.tenant.id, b.sessionToken));
      const evil = await engine().password(w.tenant, { returnTo: 'https://evil.example/x' }, { email: user.email, password: PASSWORD }, browser());
      assert.equal(location(evil), '/sessions');
    });

    it('passkey: back to the page', async () => {
      const user = await createUser(w);
      const b = browser();
      const em = await registerPasskey(w, user.id, b);
      assert.equal(location(await engine().passkey(w.tenant, { returnTo: '/connect' }, await assertion(w, em, b, 'login', null), b)), '/connect');
    });
  });

  describe('second factor', () => {
    /** A user with a confirmed authenticator app; returns its secret and recovery codes. */
    async function withTotp() {
      const user = await createUser(w);
      await w.ctx.mfa.startTotp(w.tenant.id, user.id);
      const record = (await w.ctx.signin.user(w.tenant.id, user.id))!;
      const { secret } = (await w.ctx.mfa.totpEnrolment(w.tenant.id, record, 'engine.test'))!;
      const code = () => generate({ secret, epoch: Math.floor(w.clock.now() / 1000) });
      const confirmed = await w.ctx.mfa.confirmTotp(w.tenant.id, user.id, await code());
      assert.equal(confirmed.kind, 'ok');
      w.clock.advance(31_000); // the enrolment's code is spent
      return { user, code, recovery: (confirmed as { recoveryCodes: string[] }).recoveryCodes };
    }

    it('optional policy, user with an authenticator app: password, then the challenge, then the code', async () => {
      const { user, code } = await withTotp();
      const { b, flow } = await start();
      const pending = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      assert.equal(location(pending), `/mfa/challenge?flow=${flow}`);
      assert.equal(await w.ctx.signin.current(w.tenant.id, b.sessionToken), undefined, 'no usable session before the second factor');
      const page = rendered(await engine().showChallenge(w.tenant, { flow }, b), 'challenge');
      assert.equal(page.data.totp, true);
      assert.equal(page.data.enrol, false);
      rendered(await engine().secondFactorCode(w.tenant, { flow }, { code: '000000' }, b), 'challenge', 401);
      const done = await engine().secondFactorCode(w.tenant, { flow }, { code: await code() }, b);
      assert.match(callback(done).get('code') ?? '', /^ac_/);
      assert.deepEqual((await w.ctx.signin.current(w.tenant.id, b.sessionToken))?.amr, ['pwd', 'otp', 'mfa']);
    });

    it('a recovery code is a second factor, once', async () => {
      const { user, recovery } = await withTotp();
      const { b, flow } = await start();
      b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      assert.match(callback(await engine().secondFactorCode(w.tenant, { flow }, { recoveryCode: recovery[0] }, b)).get('code') ?? '', /^ac_/);
      const again = await start();
      again.b.take(await engine().password(w.tenant, { flow: again.flow }, { email: user.email, password: PASSWORD }, again.b));
      rendered(await engine().secondFactorCode(w.tenant, { flow: again.flow }, { recoveryCode: recovery[0] }, again.b), 'challenge', 401);
    });

    it('a passkey as the second factor after a password', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      const em = await registerPasskey(w, user.id, b);
      b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      const done = await engine().secondFactorPasskey(w.tenant, { flow }, await assertion(w, em, b, 'second_factor', user.id), b);
      assert.match(callback(done).get('code') ?? '', /^ac_/);
    });

    it('optional policy, user without a second factor: the password alone completes the flow', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      assert.match(callback(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b)).get('code') ?? '', /^ac_/);
    });

    it('required policy, user without a factor: the challenge offers enrolment; enrolling an authenticator app completes the flow', async () => {
      await w.ctx.management.mfaPolicy.setTenant(w.tenant.id, { type: 'system', id: null }, 'required');
      try {
        const user = await createUser(w);
        const { b, flow } = await start();
        const pending = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
        assert.equal(location(pending), `/mfa/challenge?flow=${flow}`);
        assert.equal(rendered(await engine().showChallenge(w.tenant, { flow }, b), 'challenge').data.enrol, true);
        const owing = (await w.ctx.signin.pending(w.tenant.id, b.sessionToken))!;
        await w.ctx.mfa.startTotp(w.tenant.id, user.id);
        const { secret } = (await w.ctx.mfa.totpEnrolment(w.tenant.id, (await w.ctx.signin.user(w.tenant.id, user.id))!, 'engine.test'))!;
        assert.equal((await w.ctx.mfa.confirmTotp(w.tenant.id, user.id, await generate({ secret, epoch: Math.floor(w.clock.now() / 1000) }))).kind, 'ok');
        // The recovery codes are shown first: the outcome is the link that resumes the flow.
        const paused = await engine().enrolled(w.tenant, { flow }, owing, 'totp', { pause: true });
        assert.equal(location(paused), `/mfa/continue?flow=${flow}`);
        assert.match(callback(await engine().resume(w.tenant, { flow }, b)).get('code') ?? '', /^ac_/);
      } finally {
        await w.ctx.management.mfaPolicy.setTenant(w.tenant.id, { type: 'system', id: null }, 'optional');
      }
    });
  });

  describe('first factor: an upstream IdP (SSO)', () => {
    /** What the SSO service answers once it validated the IdP's answer: a session it opened (pending or not). */
    async function upstreamAnswer(userId: string, flow: string | undefined, pending: boolean) {
      const opened = await w.ctx.db.kysely
        .transaction()
        .execute((trx) => w.ctx.signin.openSession(trx, w.tenant.id, userId, { ip: '192.0.2.10', userAgent: null }, w.clock.now(), { amr: ['fed'], pending }));
      return { kind: 'ok' as const, ...opened, userId, continuation: flow ? { flow } : { returnTo: '/sessions' } };
    }

    it("the flow that went upstream completes with the session the IdP's answer opened", async () => {
      const user = await createUser(w);
      const { flow } = await start();
      const done = await engine().upstreamFinished(w.tenant, await upstreamAnswer(user.id, flow, false));
      assert.ok(done.session);
      assert.match(callback(done).get('code') ?? '', /^ac_/);
    });

    it('a second factor still owed after the IdP: the same challenge as after a password', async () => {
      const user = await createUser(w);
      const { flow } = await start();
      assert.equal(location(await engine().upstreamFinished(w.tenant, await upstreamAnswer(user.id, flow, true))), `/mfa/challenge?flow=${flow}`);
    });

    it('a page that went upstream gets its return_to; a flow gone meanwhile answers state_invalid', async () => {
      const user = await createUser(w);
      assert.equal(location(await engine().upstreamFinished(w.tenant, await upstreamAnswer(user.id, undefined, false))), '/sessions');
      const gone = await engine().upstreamFinished(w.tenant, await upstreamAnswer(user.id, 'flw_gone', false));
      assert.deepEqual(failure(gone), { status: 400, code: 'access_denied' });
    });

    it('starting at an unknown connection, or for a flow that is gone, is refused', async () => {
      const { flow } = await start();
      assert.deepEqual(failure(await engine().startUpstream(w.tenant, { flow }, 'sso_unknown', undefined, browser())), { status: 404, code: 'not_found' });
      assert.deepEqual(failure(await engine().startUpstream(w.tenant, { flow: 'flw_gone' }, 'sso_unknown', undefined, browser())), {
        status: 400,
        code: 'access_denied',
      });
    });
  });

  describe('entry: the console setup link', () => {
    it('creates the administrator and returns a console session, once; the link cannot be used again', async () => {
      const b = browser();
      const done = await engine().consoleSetup(w.tenant, { token: w.setupToken, email: 'admin@example.com', password: PASSWORD }, b);
      assert.equal(done.secondFactorRequired, false);
      const session = await w.ctx.signin.current(w.tenant.id, done.session.token);
      assert.equal(session?.userId, done.user.id);
      assert.deepEqual(session?.amr, ['pwd']);
      assert.equal(await w.ctx.admins.isAdmin(w.tenant.id, done.user.id), true);
      await assert.rejects(
        engine().consoleSetup(w.tenant, { token: w.setupToken, email: 'second@example.com', password: PASSWORD }, browser()),
        (err: { status: number; code: string }) => {
          assert.deepEqual([err.status, err.code], [400, 'invalid_request']);
          return true;
        },
      );
    });
  });

  describe('flows', () => {
    it("resumed from another browser: that browser must sign in itself; the flow is not completed by the first one's session", async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      b.take(await engine().password(w.tenant, { flow: undefined, returnTo: '/sessions' }, { email: user.email, password: PASSWORD }, b));
      const other = browser();
      assert.equal(location(await engine().resume(w.tenant, { flow }, other)), `/login?flow=${flow}`);
      assert.equal(location(await engine().showChallenge(w.tenant, { flow }, other)), `/login?flow=${flow}`);
      assert.equal(location(await engine().showConsent(w.tenant, { flow }, other)), `/login?flow=${flow}`);
      // The browser that signed in resumes it to the code.
      assert.match(callback(await engine().resume(w.tenant, { flow }, b)).get('code') ?? '', /^ac_/);
    });

    it('expired: every step answers that the page has expired', async () => {
      const user = await createUser(w);
      const { b, flow } = await start();
      w.clock.advance(w.ctx.config.loginFlowTtlSeconds * 1000 + 1);
      assert.deepEqual(failure(await engine().showLogin(w.tenant, { flow }, b)), { status: 400, code: 'invalid_request' });
      assert.deepEqual(failure(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b)), {
        status: 400,
        code: 'invalid_request',
      });
      assert.equal(b.sessionToken, undefined);
    });

    it('an unknown or malformed handle is gone too', async () => {
      for (const flow of ['flw_unknown', 'fl_old', 'x'.repeat(200)]) {
        assert.deepEqual(failure(await engine().showLogin(w.tenant, { flow }, browser())), { status: 400, code: 'invalid_request' });
      }
    });

    it('transitions are compare-and-set: a step taken from a stale version loses', async () => {
      const { flow } = await start();
      const store = w.ctx.db;
      const { repos } = await import('../../../src/storage/repos/index.js');
      const flows = repos(store.kysely, store.dialect).signinFlows;
      const hash = sha256Hex(flow);
      const now = w.clock.now();
      assert.equal(await flows.advance(w.tenant.id, hash, 0, 'first_factor', now), true);
      assert.equal(await flows.advance(w.tenant.id, hash, 0, 'first_factor', now), false, 'replayed from version 0');
      assert.equal(await flows.complete(w.tenant.id, hash, 0, now), false);
      assert.equal(await flows.complete(w.tenant.id, hash, 1, now), true);
      assert.equal(await flows.complete(w.tenant.id, hash, 2, now), false, 'completed once');
      assert.equal(await flows.advance('ten_other', hash, 2, 'consent', now), false, 'another tenant');
    });
  });

  describe('consent', () => {
    it('a third-party client asks; denied, the client gets access_denied and the flow is used up', async () => {
      const third = await w.ctx.management.clients.create(w.tenant.id, {
        client_name: 'Third',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        redirect_uris: ['https://app.example/cb'],
      });
      const { SigninStoreRepo } = await import('../../../src/storage/repos/signin-store.js');
      const { DEFAULT_CLIENT_SETTINGS } = await import('../../../src/oauth/authorize/types.js');
      await new SigninStoreRepo(w.ctx.db.kysely).saveClientSettings(
        w.tenant.id,
        third.client_id,
        { ...DEFAULT_CLIENT_SETTINGS, thirdParty: true },
        w.clock.now(),
      );
      const user = await createUser(w);
      const b = browser();
      const flow = flowOf(await engine().authorize({ ...authorizeParams(w), client_id: third.client_id }, w.tenant, b));
      const toConsent = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      assert.equal(location(toConsent), `/login/consent?flow=${flow}`);
      const page = rendered(await engine().showConsent(w.tenant, { flow }, b), 'consent');
      assert.equal(page.data.clientName, 'Third');
      assert.deepEqual(page.data.scopes, ['openid']);
      assert.equal(callback(await engine().consent(w.tenant, { flow }, false, b)).get('error'), 'access_denied');
      assert.deepEqual(failure(await engine().consent(w.tenant, { flow }, true, b)), { status: 400, code: 'invalid_request' });

      // Allowed in a new flow: remembered, then the code.
      const again = flowOf(await engine().authorize({ ...authorizeParams(w), client_id: third.client_id }, w.tenant, b));
      assert.match(callback(await engine().consent(w.tenant, { flow: again }, true, b)).get('code') ?? '', /^ac_/);
      assert.match(callback(await engine().authorize({ ...authorizeParams(w), client_id: third.client_id }, w.tenant, b)).get('code') ?? '', /^ac_/);
    });
  });
});
