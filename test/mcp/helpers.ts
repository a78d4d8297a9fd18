import assert from 'node:assert/strict';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Browser, location, PASSWORD, signIn } from '../signin/helpers.js';

/** Where the MCP client says it listens for the authorization response (never visited). */
export const MCP_REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * The OAuth client provider of an MCP client, kept in memory: what a desktop agent stores. The
 * authorization URL it is sent to is recorded for the test to drive the hosted login.
 */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  clientMetadataUrl?: string;
  constructor(preset?: OAuthClientInformationMixed) {
    this.info = preset;
  }
  get redirectUrl(): string {
    return MCP_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [MCP_REDIRECT],
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
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

export const mcpUrl = (issuer: string) => new URL(`${issuer}/mcp`);

export function connectClient(issuer: string, provider: OAuthClientProvider) {
  const transport = new StreamableHTTPClientTransport(mcpUrl(issuer), { authProvider: provider });
  const client = new Client({ name: 'keyhall-test-agent', version: '1.0.0' });
  return { transport, client, connect: () => client.connect(transport) };
}

/**
 * Follows an authorization URL through the hosted login (and consent) with a cookie jar, as a
 * browser would, and returns the redirect back to the client.
 */
export async function signInThroughBrowser(
  port: number,
  authorizationUrl: URL,
  email: string,
): Promise<{ code: string; iss: string | null; consented: boolean }> {
  const b = new Browser(port, authorizationUrl.host);
  let r = await b.get(authorizationUrl.pathname + authorizationUrl.search);
  assert.equal(r.status, 303, r.text.slice(0, 300));
  r = await signIn(b, location(r), email, PASSWORD);
  let consented = false;
  if (r.status === 303 && location(r).startsWith('/login/consent')) {
    const page = await b.get(location(r));
    assert.equal(page.status, 200, page.text.slice(0, 300));
    // The consent page says what the tools' scopes allow, and names the /mcp resource.
    assert.match(page.text, /Use the accounts you connected/);
    assert.match(page.text, /\/mcp<\/li>/);
    r = await b.submit(page, { decision: 'allow' });
    consented = true;
  }
  const back = new URL(location(r));
  assert.equal(`${back.origin}${back.pathname}`, MCP_REDIRECT);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.search}`);
  return { code, iss: back.searchParams.get('iss'), consented };
}

export interface ToolText {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}

/** The JSON a tool answered with. */
export function toolJson(result: unknown): Record<string, unknown> {
  const r = result as ToolText;
  return JSON.parse(r.content[0]!.text!) as Record<string, unknown>;
}
