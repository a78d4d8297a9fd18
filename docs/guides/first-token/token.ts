// Your first token, from code: the client credentials grant with openid-client.
// Run: CLIENT_ID=cli_… CLIENT_SECRET=cs_… npx tsx docs/guides/first-token/token.ts
import * as client from 'openid-client';

const issuer = new URL(process.env.KEYHALL_ISSUER ?? 'http://localhost:3000');
const { CLIENT_ID, CLIENT_SECRET } = process.env;
if (!CLIENT_ID || !CLIENT_SECRET) throw new Error('Set CLIENT_ID and CLIENT_SECRET to the client registered in step 1.');

// Plain http is for a Keyhall on your own machine; a deployed issuer is https and needs no option.
const options = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;

// Discovery reads the token endpoint (and everything else) from /.well-known/openid-configuration.
const config = await client.discovery(issuer, CLIENT_ID, CLIENT_SECRET, undefined, options);
const tokens = await client.clientCredentialsGrant(config, { scope: 'reports:read' });

console.log(tokens.access_token);
console.log(`expires in ${tokens.expires_in} s, scope "${tokens.scope}"`);
