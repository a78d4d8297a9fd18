/**
 * The sign-in engine without HTTP: the real composition root (createContext) on a fresh database
 * of the suite's dialect (a SQLite file, or PostgreSQL with KEYHALL_TEST_DB=postgres), a manual
 * clock, and a "browser" that is only the cookies the engine's outcomes set.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';
import { loadConfig } from '../../../src/config/index.js';
import { type Context, createContext } from '../../../src/context.js';
import { ManualClock } from '../../../src/kernel/clock.js';
import type { OAuthTenant } from '../../../src/oauth/types.js';
import type { Browser } from '../../../src/signin/engine.js';
import type { Render, SigninOutcome } from '../../../src/signin/outcome.js';
import { freshPostgresDatabase, onPostgres } from '../../helpers/db.js';

export const REDIRECT = 'https://app.example/cb';
export const PASSWORD = 'correct horse battery staple';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

export interface EngineWorld {
  ctx: Context;
  clock: ManualClock;
  tenant: OAuthTenant;
  /** A first-party public client (PKCE) redirecting to REDIRECT. */
  clientId: string;
  /** The tenant's one-time console setup link token. */
  setupToken: string;
  close(): Promise<void>;
}

export async function openWorld(): Promise<EngineWorld> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-engine-'));
  const pg = onPostgres ? await freshPostgresDatabase() : undefined;
  const env: Record<string, string> = { KEYHALL_DATA_DIR: dataDir, KEYHALL_LOG_LEVEL: 'silent' };
  if (pg) Object.assign(env, { KEYHALL_DATABASE_URL: pg.url, KEYHALL_MASTER_KEY: randomBytes(32).toString('base64') });
  const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
  const ctx = await createContext(loadConfig(env, { bootstrap: 'false', logLevel: 'silent' }), { clock });
  const created = await ctx.tenants.create({ host: 'engine.test', issuer: 'https://engine.test' });
  const tenant = { id: created.tenant.id, issuer: created.tenant.issuer };
  const client = await ctx.management.clients.create(tenant.id, {
    client_name: 'Engine App',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    redirect_uris: [REDIRECT],
  });
  return {
    ctx,
    clock,
    tenant,
    clientId: client.client_id,
    setupToken: created.setupToken,
    close: async () => {
      await ctx.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let users = 0;
export async function createUser(w: EngineWorld, password = PASSWORD): Promise<{ id: string; email: string }> {
  const u = await w.ctx.management.users.create(w.tenant.id, { type: 'system', id: null }, { email: `user${++users}@example.com`, password, name: 'Ada' });
  return { id: u.id, email: u.email };
}

/** /authorize parameters of the test client (PKCE S256). */
export const authorizeParams = (w: EngineWorld, extra: Record<string, string> = {}) => ({
  client_id: w.clientId,
  redirect_uri: REDIRECT,
  response_type: 'code',
  scope: 'openid',
  state: 'st-1',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  ...extra,
});

/** A browser: its cookies as the engine sees them; `take` keeps the session an outcome sets. */
export function browser(binding = randomBytes(8).toString('hex')): Browser & { take(o: SigninOutcome): SigninOutcome } {
  const b: Browser & { take(o: SigninOutcome): SigninOutcome } = {
    ip: '192.0.2.10',
    userAgent: 'engine-test',
    webauthnBinding: binding,
    take(o) {
      if (o.session) b.sessionToken = o.session.token;
      return o;
    },
  };
  return b;
}

export function location(o: SigninOutcome): string {
  assert.equal(o.kind, 'redirect', JSON.stringify(o));
  return (o as { location: string }).location;
}

/** The `flw_…` handle a hosted-page location names. */
export function flowOf(o: SigninOutcome): string {
  const flow = new URL(location(o), 'https://engine.test').searchParams.get('flow');
  assert.match(flow ?? '', /^flw_/);
  return flow!;
}

/** The client's callback parameters of a redirect to REDIRECT. */
export function callback(o: SigninOutcome): URLSearchParams {
  const url = new URL(location(o));
  assert.equal(`${url.origin}${url.pathname}`, REDIRECT);
  return url.searchParams;
}

export function failure(o: SigninOutcome): { status: number; code: string } {
  assert.equal(o.kind, 'fail', JSON.stringify(o));
  const e = (o as { error: { status: number; code: string } }).error;
  return { status: e.status, code: e.code };
}

export function rendered<P extends Render['page']>(o: SigninOutcome, page: P, status = 200): Extract<Render, { page: P }> & SigninOutcome {
  assert.equal(o.kind, 'render', JSON.stringify(o));
  const r = o as Extract<Render, { page: P }> & SigninOutcome;
  assert.equal(r.page, page);
  assert.equal(r.status, status);
  return r;
}

/** A software passkey (nid-webauthn-emulator) registered for the user through the MFA service. */
export async function registerPasskey(w: EngineWorld, userId: string, b: Browser): Promise<WebAuthnEmulator> {
  const em = new WebAuthnEmulator(new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
  const user = (await w.ctx.signin.user(w.tenant.id, userId))!;
  const options = await w.ctx.mfa.registrationOptions(w.tenant, user, b.webauthnBinding);
  const r = await w.ctx.mfa.registerPasskey(w.tenant, user, b.webauthnBinding, JSON.stringify(em.createJSON(w.tenant.issuer, options as never)), 'Laptop');
  assert.equal(r.kind, 'ok', JSON.stringify(r));
  return em;
}

/** A passkey assertion for a sign-in (first factor) or a challenge (second factor). */
export async function assertion(w: EngineWorld, em: WebAuthnEmulator, b: Browser, purpose: 'login' | 'second_factor', userId: string | null): Promise<string> {
  const options = await w.ctx.mfa.authenticationOptions(w.tenant, b.webauthnBinding, purpose, userId);
  return JSON.stringify(em.getJSON(w.tenant.issuer, options as never));
}
