// A single-page app signing users in with Keyhall: the authorization code flow with PKCE, in the
// browser, with oauth4webapi. With a bundler (Vite, esbuild, …) write: import * as oauth from 'oauth4webapi';
import * as oauth from '/oauth4webapi.js';
import { clientId, issuer as issuerUrl } from '/config.js';

const issuer = new URL(issuerUrl);
const client = { client_id: clientId };
const clientAuth = oauth.None(); // a public client: a browser cannot keep a secret
const redirectUri = `${location.origin}/callback`;
// Plain http is for a Keyhall on your own machine; a deployed issuer is https and needs no option.
const http = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

// Discovery is public: Keyhall answers it to any origin.
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));

async function signIn() {
  // PKCE: the verifier stays in this tab; Keyhall gets only its SHA-256.
  const verifier = oauth.generateRandomCodeVerifier();
  sessionStorage.setItem('pkce_verifier', verifier);
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url);
}

async function finishSignIn() {
  const verifier = sessionStorage.getItem('pkce_verifier');
  sessionStorage.removeItem('pkce_verifier');
  if (!verifier) throw new Error('no sign-in in progress in this tab');
  // The answer must come from this issuer (`iss`) and carry a code; PKCE does the job of `state`.
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), oauth.expectNoState);
  // A cross-origin POST to /token: the browser lets the page read the answer only because
  // Keyhall answers CORS for the origins the client lists in `allowed_origins`.
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, http);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  const { sub } = oauth.getValidatedIdTokenClaims(tokens);
  // A GET with an Authorization header: the browser sends a CORS preflight first.
  const userinfo = await oauth.userInfoRequest(as, client, tokens.access_token, http);
  return oauth.processUserInfoResponse(as, client, sub, userinfo);
}

const greeting = document.getElementById('greeting');
if (location.pathname === '/callback') {
  try {
    const user = await finishSignIn(); // tokens stay in memory: never in localStorage
    greeting.textContent = `Signed in as ${user.email}`;
    document.getElementById('claims').textContent = JSON.stringify(user, null, 2);
  } catch (err) {
    greeting.textContent = `Sign-in failed: ${err.message}`;
  }
  history.replaceState(null, '', '/'); // the code is spent: keep it out of the address bar
} else {
  const button = document.getElementById('sign-in');
  button.hidden = false;
  button.addEventListener('click', signIn);
}
