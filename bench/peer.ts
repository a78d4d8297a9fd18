/**
 * The peer: node-oidc-provider 9 configured like Keyhall's client_credentials path
 * (client_secret_basic, EdDSA-signed JWT access tokens through resource indicators, DPoP, the
 * library's in-memory adapter). Its JWT access tokens cannot be introspected (the library refuses
 * structured tokens at /introspect), so the introspection scenario uses its opaque tokens.
 *
 * Its code flow, for the login scenario: a confidential client_secret_basic client, PAR at /par,
 * /authorize, an RS256 ID token like Keyhall's. The interaction (the library leaves the login
 * page to the application) is ours: GET /interaction/<uid> renders a form, POST
 * /interaction/<uid>/login verifies the password against an argon2id hash with Keyhall's own
 * parameters (the compiled src/users/passwords.ts) and grants the requested OIDC scopes, so no
 * consent page follows. The library then resumes at /authorize/<uid>, which redirects to the
 * client: one exchange more than Keyhall's, which the load client follows.
 */
import { exportJWK, generateKeyPair } from 'jose';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider from 'oidc-provider';
import { compiled } from './compiled.js';
import { PASSWORD, REDIRECT } from './fixtures.js';

const { hashPassword, verifyPassword } = await compiled<typeof import('../src/users/passwords.js')>('users/passwords.js');

export const PEER_RESOURCE = 'urn:bench:api';
/** Tokens for this resource are opaque (stored in the adapter), hence introspectable. */
export const PEER_OPAQUE_RESOURCE = 'urn:bench:opaque';

export async function startPeer(): Promise<{
  port: number;
  clientId: string;
  clientSecret: string;
  /** The code-flow client and its user (password PASSWORD). */
  web: { clientId: string; clientSecret: string; email: string };
  resource: string;
  opaqueResource: string;
  close: () => Promise<void>;
}> {
  const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'peer-ed25519', alg: 'EdDSA', use: 'sig' };
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const rsaJwk = { ...(await exportJWK(rsa.privateKey)), kid: 'peer-rs256', alg: 'RS256', use: 'sig' };
  const web = { clientId: 'bench-web', clientSecret: 'bench-web-secret-0123456789abcdef0123456789abcdef', email: 'bench@example.com' };
  const account = { id: 'bench-user', email: web.email, passwordHash: await hashPassword(PASSWORD) };
  const clientId = 'bench-client';
  const clientSecret = 'bench-secret-0123456789abcdef0123456789abcdef';
  // The issuer's port is fixed after listen; a provisional issuer would not match `aud`/`htu`.
  const server = (await import('node:http')).createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'read',
        id_token_signed_response_alg: 'EdDSA',
      },
      {
        client_id: web.clientId,
        client_secret: web.clientSecret,
        // The bench's code flow asks for `openid` only: no refresh token on either side.
        grant_types: ['authorization_code'],
        redirect_uris: [REDIRECT],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
      },
    ],
    jwks: { keys: [jwk as never, rsaJwk as never] },
    scopes: ['openid', 'read'],
    cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 600, Session: 3600 },
    routes: { authorization: '/authorize', pushed_authorization_request: '/par' },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => (sub === account.id ? { accountId: sub, claims: () => ({ sub, email: account.email }) } : undefined),
    enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      dPoP: { enabled: true, nonceSecret: undefined },
      resourceIndicators: {
        enabled: true,
        // The code flow's tokens are for /userinfo (opaque, stored); client_credentials' for the API.
        defaultResource: (_ctx, client, oneOf) => (client?.clientId === web.clientId ? undefined : (oneOf ?? PEER_RESOURCE)) as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) =>
          resource === PEER_OPAQUE_RESOURCE
            ? { scope: 'read', audience: resource, accessTokenTTL: 600, accessTokenFormat: 'opaque' }
            : { scope: 'read', audience: resource, accessTokenTTL: 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'EdDSA' } } },
      },
    },
  });
  // oidc-provider logs nothing by default; its in-memory adapter is the library's own.
  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/interaction\/([\w-]+)(\/login)?$/.exec(req.url ?? '');
    if (!m) return callback(req, res);
    interaction(provider, account, req, res, m[2] !== undefined).catch((err: Error) => {
      res.statusCode = 500;
      res.end(err.message);
    });
  });
  return {
    port,
    clientId,
    clientSecret,
    web,
    resource: PEER_RESOURCE,
    opaqueResource: PEER_OPAQUE_RESOURCE,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });
}

/** The login interaction: the form, then the password checked with argon2id and the OIDC scopes granted. */
async function interaction(
  provider: Provider,
  account: { id: string; email: string; passwordHash: string },
  req: IncomingMessage,
  res: ServerResponse,
  submitted: boolean,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (!submitted) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><title>Sign in</title><form method="post" action="/interaction/${escape(details.uid)}/login">` +
        `<input type="hidden" name="uid" value="${escape(details.uid)}"><input name="email"><input name="password" type="password"><button>Sign in</button></form>`,
    );
    return;
  }
  const form = await readForm(req);
  const ok = form.get('email') === account.email && (await verifyPassword(account.passwordHash, form.get('password') ?? ''));
  if (!ok) {
    res.statusCode = 401;
    res.end('invalid credentials');
    return;
  }
  const grant = new provider.Grant({ accountId: account.id, clientId: details.params.client_id as string });
  grant.addOIDCScope(String(details.params.scope ?? 'openid'));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: account.id }, consent: { grantId } }, { mergeWithLastSubmission: false });
}
