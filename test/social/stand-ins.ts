/**
 * Upstream stand-ins for social sign-in tests, each a small node:http server on 127.0.0.1:
 * - a GitHub-like OAuth 2.0 provider: no ID token, `/user` with a numeric id, `/user/emails`;
 * - a bare OpenID provider whose ID tokens the test bends (another audience, another nonce);
 * - a Sign-in-with-Apple-like provider (form_post answers, an ES256 JWT as client secret).
 * The test plays the browser at their authorization endpoint: `approve` turns the authorization
 * URL Keyhall sent the browser to into the callback URL the provider would redirect back to.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';

async function bodyOf(req: IncomingMessage): Promise<URLSearchParams> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  return new URLSearchParams(raw);
}

interface Grant {
  person: string;
  redirectUri: string;
  challenge: string | null;
  nonce: string | null;
}

abstract class StandIn {
  protected server!: Server;
  origin = '';
  protected readonly codes = new Map<string, Grant>();
  /** How many token requests arrived (a refused callback must not reach the token endpoint). */
  tokenRequests = 0;

  protected async listen(handler: Parameters<typeof createServer>[1]): Promise<void> {
    this.server = createServer(handler);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The user approves at the provider: the callback URL (code, state) for the authorization request `authorizeUrl`. */
  approve(authorizeUrl: string, person: string, extra: Record<string, string> = {}): URL {
    const u = new URL(authorizeUrl);
    if (u.origin !== this.origin) throw new Error(`not this provider: ${authorizeUrl}`);
    const code = randomBytes(16).toString('hex');
    const redirectUri = u.searchParams.get('redirect_uri')!;
    this.codes.set(code, { person, redirectUri, challenge: u.searchParams.get('code_challenge'), nonce: u.searchParams.get('nonce') });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', u.searchParams.get('state')!);
    for (const [k, v] of Object.entries(extra)) back.searchParams.set(k, v);
    return back;
  }

  /** The code grant's checks: the code (once), the redirect_uri and the PKCE verifier. */
  protected redeem(form: URLSearchParams): Grant | undefined {
    this.tokenRequests++;
    const grant = this.codes.get(form.get('code') ?? '');
    if (!grant) return undefined;
    this.codes.delete(form.get('code')!);
    if (form.get('redirect_uri') !== grant.redirectUri) return undefined;
    if (grant.challenge !== null) {
      const verifier = form.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return undefined;
    }
    return grant;
  }
}

export interface GithubPerson {
  id: number;
  login: string;
  name: string;
  avatar: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export class GithubStandIn extends StandIn {
  readonly clientId = 'gh-client';
  readonly clientSecret = 'gh-secret';
  readonly people = new Map<string, GithubPerson>();
  /** The person who approves when a browser visits the authorization endpoint (null: the test approves). */
  autoApprove: string | null = null;
  readonly #tokens = new Map<string, string>();

  static async start(): Promise<GithubStandIn> {
    const g = new GithubStandIn();
    await g.listen(async (req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const url = new URL(req.url!, g.origin);
      // A real browser arrives here: the person `autoApprove` names approves at once.
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize' && g.autoApprove !== null)
        return res.writeHead(302, { location: g.approve(url.href, g.autoApprove).href }).end();
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = await bodyOf(req);
        if (form.get('client_id') !== g.clientId || form.get('client_secret') !== g.clientSecret) return json(401, { error: 'invalid_client' });
        const grant = g.redeem(form);
        if (!grant) return json(400, { error: 'invalid_grant' });
        const token = randomBytes(16).toString('hex');
        g.#tokens.set(token, grant.person);
        return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const person = g.people.get(g.#tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, '')) ?? '');
      if (!person) return json(401, { message: 'Bad credentials' });
      if (url.pathname === '/user') return json(200, { id: person.id, login: person.login, name: person.name, avatar_url: person.avatar, email: null });
      if (url.pathname === '/user/emails') return json(200, person.emails);
      return json(404, { message: 'Not Found' });
    });
    return g;
  }

  /** The body of POST /v1/social_connections for this provider. */
  connection(name = 'GitHub') {
    return {
      name,
      client_id: this.clientId,
      client_secret: this.clientSecret,
      scopes: ['read:user', 'user:email'],
      oauth2: {
        authorization_endpoint: `${this.origin}/login/oauth/authorize`,
        token_endpoint: `${this.origin}/login/oauth/access_token`,
        userinfo_endpoint: `${this.origin}/user`,
        emails_endpoint: `${this.origin}/user/emails`,
        token_endpoint_auth_method: 'client_secret_post',
        fields: { subject: 'id', name: 'name', picture: 'avatar_url' },
      },
    };
  }
}

/** An OpenID provider whose next ID token the test bends. */
export class OidcStandIn extends StandIn {
  readonly clientId = 'oidc-client';
  readonly clientSecret = 'oidc-secret';
  /** Claims the next ID token carries instead (`aud`, `nonce`, …). */
  bend: Record<string, unknown> = {};
  #key!: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  #jwk!: Record<string, unknown>;

  static async start(): Promise<OidcStandIn> {
    const o = new OidcStandIn();
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    o.#key = privateKey;
    o.#jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    await o.listen(async (req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const url = new URL(req.url!, o.origin);
      if (url.pathname === '/.well-known/openid-configuration')
        return json(200, {
          issuer: o.origin,
          authorization_endpoint: `${o.origin}/authorize`,
          token_endpoint: `${o.origin}/token`,
          jwks_uri: `${o.origin}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['client_secret_post'],
          code_challenge_methods_supported: ['S256'],
        });
      if (url.pathname === '/jwks') return json(200, { keys: [o.#jwk] });
      if (req.method === 'POST' && url.pathname === '/token') {
        const form = await bodyOf(req);
        if (form.get('client_id') !== o.clientId || form.get('client_secret') !== o.clientSecret) return json(401, { error: 'invalid_client' });
        const grant = o.redeem(form);
        if (!grant) return json(400, { error: 'invalid_grant' });
        const now = Math.floor(Date.now() / 1000);
        const idToken = await new SignJWT({
          email: `${grant.person}@stand-in.test`,
          email_verified: true,
          nonce: grant.nonce,
          ...o.bend,
        })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(o.origin)
          .setSubject(grant.person)
          .setAudience((o.bend.aud as string | undefined) ?? o.clientId)
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .sign(o.#key);
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
      }
      return json(404, { error: 'not_found' });
    });
    return o;
  }
}

/**
 * A Sign-in-with-Apple stand-in: an OpenID provider that answers by form_post (the test posts
 * its form) and authenticates the client by a client secret that is an ES256 JWT, verified here
 * with jose as Apple does: signed by the registered key (`kid`), `iss` the team id, `sub` the
 * client id, `aud` https://appleid.apple.com, and a lifetime of at most six months.
 */
export class AppleStandIn extends StandIn {
  readonly clientId = 'com.example.signin';
  readonly teamId = 'TEAM123456';
  readonly keyId = 'KEY1234567';
  /** The `.p8` the operator downloads from Apple: the connection's private key (PKCS #8 PEM). */
  privateKeyPem = '';
  /** Why the last client secret was refused, if it was. */
  secretRefused: string | null = null;
  /** The claims of the last accepted client secret. */
  lastSecret: Record<string, unknown> | null = null;
  #clientKey!: KeyObject;
  #signKey!: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  #jwk!: Record<string, unknown>;

  static async start(): Promise<AppleStandIn> {
    const a = new AppleStandIn();
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    a.privateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    a.#clientKey = pair.publicKey;
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    a.#signKey = privateKey;
    a.#jwk = { ...(await exportJWK(publicKey)), kid: 'apple-1', alg: 'ES256', use: 'sig' };
    await a.listen(async (req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const url = new URL(req.url!, a.origin);
      if (url.pathname === '/.well-known/openid-configuration')
        return json(200, {
          issuer: a.origin,
          authorization_endpoint: `${a.origin}/auth/authorize`,
          token_endpoint: `${a.origin}/auth/token`,
          jwks_uri: `${a.origin}/auth/keys`,
          response_types_supported: ['code'],
          response_modes_supported: ['query', 'fragment', 'form_post'],
          subject_types_supported: ['pairwise'],
          id_token_signing_alg_values_supported: ['ES256'],
          token_endpoint_auth_methods_supported: ['client_secret_post'],
        });
      if (url.pathname === '/auth/keys') return json(200, { keys: [a.#jwk] });
      if (req.method === 'POST' && url.pathname === '/auth/token') {
        const form = await bodyOf(req);
        if (form.get('client_id') !== a.clientId) return json(400, { error: 'invalid_client' });
        try {
          const { payload, protectedHeader } = await jwtVerify(form.get('client_secret') ?? '', a.#clientKey, {
            algorithms: ['ES256'],
            issuer: a.teamId,
            subject: a.clientId,
            audience: 'https://appleid.apple.com',
          });
          if (protectedHeader.kid !== a.keyId) throw new Error(`kid ${protectedHeader.kid}`);
          if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number' || payload.exp - payload.iat > 15_777_000) throw new Error('lifetime');
          a.lastSecret = { ...payload, kid: protectedHeader.kid };
        } catch (err) {
          a.secretRefused = (err as Error).message;
          return json(400, { error: 'invalid_client' });
        }
        const grant = a.redeem(form);
        if (!grant) return json(400, { error: 'invalid_grant' });
        const now = Math.floor(Date.now() / 1000);
        const idToken = await new SignJWT({ email: `${grant.person}@privaterelay.example`, email_verified: 'true', nonce: grant.nonce })
          .setProtectedHeader({ alg: 'ES256', kid: 'apple-1' })
          .setIssuer(a.origin)
          .setSubject(`000123.${grant.person}`)
          .setAudience(a.clientId)
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .sign(a.#signKey);
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 3600, id_token: idToken });
      }
      return json(404, { error: 'not_found' });
    });
    return a;
  }

  /** The form Apple's page posts to the redirect URI (response_mode=form_post), and that URI. */
  formPost(authorizeUrl: string, person: string, user?: Record<string, unknown>): { action: string; form: Record<string, string> } {
    const u = new URL(authorizeUrl);
    if (u.searchParams.get('response_mode') !== 'form_post') throw new Error('not a form_post request');
    const back = this.approve(authorizeUrl, person);
    const form: Record<string, string> = { code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
    if (user) form.user = JSON.stringify(user);
    return { action: back.pathname, form };
  }
}
