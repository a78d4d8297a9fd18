/**
 * The sign-in engine's `device` entry (RFC 8628's /activate, docs/device-grant.md) without HTTP:
 * the user code starts a flow, the same steps as any sign-in (first factor, second factor), then
 * the approval page; the flow handle alone approves nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import type { OAuthHttpRequest } from '../../../src/oauth/types.js';
import { browser, createUser, type EngineWorld, failure, flowOf, location, openWorld, PASSWORD, rendered } from './helpers.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const form = (path: string, body: Record<string, string>): OAuthHttpRequest => ({ method: 'POST', path, headers: {}, body });

describe('sign-in engine: the device entry', () => {
  let w: EngineWorld;
  let clientId: string;
  before(async () => {
    w = await openWorld();
    const c = await w.ctx.management.clients.create(w.tenant.id, { client_name: 'Kiosk', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT] });
    clientId = c.client_id;
  });
  after(() => w.close());
  const engine = () => w.ctx.engine;
  const authorizeDevice = () => w.ctx.oauth.deviceAuthorization(form('/device_authorization', { client_id: clientId, scope: 'openid' }), w.tenant);
  const redeem = (deviceCode: string) =>
    w.ctx.oauth.token(form('/token', { client_id: clientId, grant_type: DEVICE_GRANT, device_code: deviceCode }), w.tenant);

  it('code, password, the second factor, then the approval page; the tokens carry the sign-in methods', async () => {
    const user = await createUser(w);
    await w.ctx.mfa.startTotp(w.tenant.id, user.id);
    const record = (await w.ctx.signin.user(w.tenant.id, user.id))!;
    const { secret } = (await w.ctx.mfa.totpEnrolment(w.tenant.id, record, 'engine.test'))!;
    const code = () => generate({ secret, epoch: Math.floor(w.clock.now() / 1000) });
    assert.equal((await w.ctx.mfa.confirmTotp(w.tenant.id, user.id, await code())).kind, 'ok');
    w.clock.advance(31_000);

    const d = await authorizeDevice();
    const b = browser();
    const shown = rendered(await engine().showActivate(w.tenant, d.user_code), 'activate');
    assert.equal(shown.data.userCode, d.user_code);
    const login = await engine().activate(w.tenant, d.user_code, b);
    const flow = flowOf(login);
    assert.equal(location(login), `/login?flow=${flow}`);
    assert.equal(rendered(await engine().showLogin(w.tenant, { flow }, b), 'login').data.clientName, 'Kiosk');
    const challenge = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
    assert.equal(location(challenge), `/mfa/challenge?flow=${flow}`);
    // Owing the second factor, the approval page is not reachable yet.
    assert.equal(location(await engine().showDeviceApproval(w.tenant, { flow }, b)), `/mfa/challenge?flow=${flow}`);
    const approval = await engine().secondFactorCode(w.tenant, { flow }, { code: await code() }, b);
    assert.equal(location(approval), `/activate/confirm?flow=${flow}`);
    const page = rendered(await engine().showDeviceApproval(w.tenant, { flow }, b), 'device_consent');
    assert.deepEqual([page.data.clientName, page.data.scopes], ['Kiosk', ['openid']]);

    // The handle in another browser (no session) leads to that browser's login, and decides nothing.
    assert.equal(location(await engine().deviceDecision(w.tenant, { flow }, true, browser())), `/login?flow=${flow}`);
    await assert.rejects(redeem(d.device_code), { code: 'authorization_pending' });

    assert.equal(rendered(await engine().deviceDecision(w.tenant, { flow }, true, b), 'device_done').data.approved, true);
    const tokens = await redeem(d.device_code);
    const id = decodeJwt(tokens.id_token!);
    assert.equal(id.sub, user.id);
    assert.deepEqual(id.amr, ['pwd', 'otp', 'mfa']);
    // Decided: the flow is gone.
    assert.deepEqual(failure(await engine().deviceDecision(w.tenant, { flow }, false, b)), { status: 400, code: 'invalid_request' });
  });

  it('a single-factor session from before the tenant required a second factor signs in again before it can approve', async () => {
    const user = await createUser(w);
    const d = await authorizeDevice();
    const b = browser();
    const flow = flowOf(await engine().activate(w.tenant, d.user_code, b));
    assert.equal(location(b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b))), `/activate/confirm?flow=${flow}`);
    await w.ctx.management.mfaPolicy.setTenant(w.tenant.id, { type: 'system', id: null }, 'required');
    try {
      assert.equal(location(await engine().showDeviceApproval(w.tenant, { flow }, b)), `/login?flow=${flow}`);
      assert.equal(location(await engine().deviceDecision(w.tenant, { flow }, true, b)), `/login?flow=${flow}`);
      await assert.rejects(redeem(d.device_code), { code: 'authorization_pending' });
      // Signing in again owes the second factor the policy asks for (enrolment, as the user has none).
      const again = b.take(await engine().password(w.tenant, { flow }, { email: user.email, password: PASSWORD }, b));
      assert.equal(location(again), `/mfa/challenge?flow=${flow}`);
      assert.equal(location(await engine().deviceDecision(w.tenant, { flow }, true, b)), `/mfa/challenge?flow=${flow}`);
    } finally {
      await w.ctx.management.mfaPolicy.setTenant(w.tenant.id, { type: 'system', id: null }, 'optional');
    }
  });
});
