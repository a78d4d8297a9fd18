// An MCP client agent for Keyhall's /mcp server (@modelcontextprotocol/sdk): it registers itself
// (dynamic client registration), sends you to Keyhall's sign-in with PKCE, receives the code on a
// loopback address, then lists the tools and calls two of them as you.
// Run: KEYHALL_ISSUER=http://localhost:3000 npx tsx agent.ts
import http from 'node:http';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

const issuer = process.env.KEYHALL_ISSUER ?? 'http://localhost:3000';
const port = Number(process.env.PORT ?? 33418);
const redirectUrl = `http://127.0.0.1:${port}/callback`;

/** What the agent remembers between runs; in memory here (a desktop agent keeps it in its keychain). */
class AgentAuth implements OAuthClientProvider {
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  get redirectUrl(): string {
    return redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Example agent',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    console.log(`Sign in: ${url.href}`);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Listens on the loopback redirect address for the code Keyhall sends the browser back with. */
function loopback(): { code: Promise<string>; close: () => void } {
  let server: http.Server | undefined;
  const code = new Promise<string>((resolve, reject) => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', redirectUrl);
      if (url.pathname !== '/callback') return res.writeHead(404).end();
      const code = url.searchParams.get('code');
      res
        .writeHead(code ? 200 : 400, { 'content-type': 'text/plain' })
        .end(code ? 'Signed in: you can close this tab.' : `Sign-in failed: ${url.searchParams.get('error')}`);
      server!.close();
      if (code) resolve(code);
      else reject(new Error(`sign-in failed: ${url.searchParams.get('error')} ${url.searchParams.get('error_description') ?? ''}`));
    });
    server.listen(port, '127.0.0.1');
  });
  return { code, close: () => server!.close() };
}

const auth = new AgentAuth();
const mcp = new URL(`${issuer}/mcp`);
const client = new Client({ name: 'keyhall-example-agent', version: '0.1.0' });
const redirect = loopback();
try {
  await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: auth }));
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err;
  // 401 from /mcp: the SDK found Keyhall through the protected-resource metadata, registered
  // the agent and printed the sign-in URL. Redeem the code, then connect again.
  const first = new StreamableHTTPClientTransport(mcp, { authProvider: auth });
  await first.finishAuth(await redirect.code);
  await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: auth }));
} finally {
  redirect.close();
}

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';
console.log(
  `tools: ${(await client.listTools()).tools
    .map((t) => t.name)
    .sort()
    .join(', ')}`,
);
console.log(`whoami: ${text(await client.callTool({ name: 'whoami', arguments: {} }))}`);
console.log(`organizations: ${text(await client.callTool({ name: 'list_organizations', arguments: {} }))}`);
await client.close();
