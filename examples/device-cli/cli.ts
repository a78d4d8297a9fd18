// A command-line tool that signs its user in with the OAuth 2.0 Device Authorization Grant
// (RFC 8628) through oauth4webapi: it asks Keyhall for a device code, prints the address and the
// code to type there (on a phone or another computer), polls the token endpoint at the interval
// Keyhall names until the user approves or denies, then calls /userinfo with the access token.
// Run: KEYHALL_ISSUER=http://localhost:3000 CLIENT_ID=<a public client with the device grant> npx tsx cli.ts
import * as oauth from 'oauth4webapi';

const issuer = new URL(process.env.KEYHALL_ISSUER ?? 'http://localhost:3000');
const client: oauth.Client = { client_id: process.env.CLIENT_ID ?? '' };
if (!client.client_id) throw new Error('set CLIENT_ID to a public client whose grant_types include urn:ietf:params:oauth:grant-type:device_code');
// A public client: it holds no secret (a CLI cannot keep one).
const auth = oauth.None();
// The quick start's Keyhall is plain http on localhost; anywhere else the issuer is https.
const http = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }));

const started = await oauth.processDeviceAuthorizationResponse(
  as,
  client,
  await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'openid email offline_access' }), http),
);
console.log(`To sign in, open ${started.verification_uri} and enter the code ${started.user_code}`);
if (started.verification_uri_complete) console.log(`Or open ${started.verification_uri_complete}`);

let interval = started.interval ?? 5;
let tokens: oauth.TokenEndpointResponse | undefined;
while (!tokens) {
  await new Promise((r) => setTimeout(r, interval * 1000));
  try {
    tokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, started.device_code, http));
  } catch (err) {
    if (!(err instanceof oauth.ResponseBodyError)) throw err;
    // Still waiting for the user, or asked to poll more slowly (RFC 8628, section 3.5).
    if (err.error === 'authorization_pending') continue;
    if (err.error === 'slow_down') {
      interval += 5;
      continue;
    }
    // access_denied (the user said no) or expired_token (nobody came in time).
    console.log(`Not signed in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`);
    process.exit(1);
  }
}

const claims = oauth.getValidatedIdTokenClaims(tokens);
const info = await oauth.processUserInfoResponse(
  as,
  client,
  claims?.sub ?? oauth.skipSubjectCheck,
  await oauth.userInfoRequest(as, client, tokens.access_token, http),
);
console.log(`Signed in as ${info.email ?? info.sub} (refresh token: ${tokens.refresh_token ? 'yes' : 'no'})`);
