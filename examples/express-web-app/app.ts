// A server-rendered web app that signs users in with Keyhall (openid-client, Express): sign-in
// with PKCE, refresh of the access token with the refresh token, and sign-out at Keyhall too.
// Run: CLIENT_ID=cli_… CLIENT_SECRET=cs_… npx tsx app.ts
import { randomBytes } from 'node:crypto';
import express from 'express';
import * as client from 'openid-client';

const issuer = new URL(process.env.KEYHALL_ISSUER ?? 'http://localhost:3000');
const { CLIENT_ID, CLIENT_SECRET } = process.env;
if (!CLIENT_ID || !CLIENT_SECRET) throw new Error('Set CLIENT_ID and CLIENT_SECRET to the client registered for this app (see README.md).');
const port = Number(process.env.PORT ?? 8000);
const appUrl = `http://localhost:${port}`;

// Plain http is for a Keyhall on your own machine; a deployed issuer is https and needs no option.
const options = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
const config = await client.discovery(issuer, CLIENT_ID, CLIENT_SECRET, undefined, options);

// Sessions in memory, keyed by a random cookie: use a real session store in production.
interface Session {
  pending?: { verifier: string; state: string; nonce: string };
  user?: client.IDToken;
  tokens?: { idToken: string; accessToken: string; refreshToken?: string; expiresAt: number };
}
const sessions = new Map<string, Session>();
const COOKIE = 'example_session'; // cookies ignore ports: do not reuse a Keyhall cookie name on localhost

function session(req: express.Request, res: express.Response): Session {
  let id = /(?:^|;\s*)example_session=([\w-]{43})(?:;|$)/.exec(req.headers.cookie ?? '')?.[1];
  if (!id || !sessions.has(id)) {
    id = randomBytes(32).toString('base64url');
    sessions.set(id, {});
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' });
  }
  return sessions.get(id)!;
}

function keep(s: Session, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): void {
  s.tokens = {
    idToken: tokens.id_token ?? s.tokens!.idToken,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? s.tokens?.refreshToken,
    expiresAt: Date.now() + (tokens.expiresIn() ?? 0) * 1000,
  };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const app = express();

app.get('/', (req, res) => {
  const { user, tokens } = session(req, res);
  if (!user || !tokens) return res.type('html').send('<h1>Welcome</h1><a href="/login">Sign in</a>');
  res.type('html').send(
    `<h1>Hello, ${escape(String(user.email))}</h1>
<p>Access token <code id="access-token">${escape(tokens.accessToken.slice(-12))}</code> (last characters), valid until
<time>${new Date(tokens.expiresAt).toISOString()}</time>.</p>
<form method="post" action="/refresh"><button>Refresh the access token</button></form>
<form method="post" action="/logout"><button>Sign out</button></form>
<pre>${escape(JSON.stringify(user, null, 2))}</pre>`,
  );
});

// Send the browser to Keyhall's /authorize, with PKCE, state and nonce kept in the session.
// offline_access asks for a refresh token (the client is registered for the refresh_token grant).
app.get('/login', async (req, res) => {
  const verifier = client.randomPKCECodeVerifier();
  const pending = { verifier, state: client.randomState(), nonce: client.randomNonce() };
  session(req, res).pending = pending;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${appUrl}/callback`,
    scope: 'openid email profile offline_access',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  res.redirect(url.href);
});

// Keyhall sends the browser back with a code: redeem it (checking state, iss, PKCE and the ID token).
app.get('/callback', async (req, res) => {
  const s = session(req, res);
  if (!s.pending) return res.status(400).send('No sign-in in progress: start again at /login.');
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(req.originalUrl, appUrl), {
      pkceCodeVerifier: s.pending.verifier,
      expectedState: s.pending.state,
      expectedNonce: s.pending.nonce,
      idTokenExpected: true,
    });
    s.user = tokens.claims();
    keep(s, tokens);
    res.redirect('/');
  } catch (err) {
    res.status(400).send(`Sign-in failed: ${escape(String(err))}`);
  } finally {
    delete s.pending;
  }
});

// A new access token from the refresh token (Keyhall rotates the refresh token too).
app.post('/refresh', async (req, res) => {
  const s = session(req, res);
  if (!s.tokens?.refreshToken) return res.redirect('/login');
  try {
    keep(s, await client.refreshTokenGrant(config, s.tokens.refreshToken));
    res.redirect('/');
  } catch (err) {
    res.status(400).send(`Refresh failed: ${escape(String(err))}`);
  }
});

// Forget the session here, then end the one at Keyhall (RP-initiated logout), which sends the
// browser back to this app's home page (a registered post_logout_redirect_uri).
app.post('/logout', (req, res) => {
  const s = session(req, res);
  const idToken = s.tokens?.idToken;
  delete s.user;
  delete s.tokens;
  if (!idToken) return res.redirect('/');
  res.redirect(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${appUrl}/` }).href);
});

app.listen(port, () => console.log(`Web app on ${appUrl}`));
