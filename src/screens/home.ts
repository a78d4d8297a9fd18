/** The page at / of a tenant's host (src/http/home.ts): where a person goes from there. */
import { html, type Html } from './html.js';
import { layout, type PageFrame } from './pages.js';

export function homePage(f: PageFrame, v: { issuer: string; documents: string[] }): Html {
  return layout(
    f,
    html`<h1>Keyhall</h1>
<p>The identity service at <code>${v.issuer}</code>: OAuth 2.0 and OpenID Connect, the management API, SCIM and the hosted sign-in.</p>
<nav aria-label="Start here">
<ul>
<li><a href="/console/">Console</a>: administrators manage organizations, users, applications and keys.</li>
<li><a href="/v1/docs">API reference</a>: the management API, OAuth and SCIM, rendered from ${v.documents.map((d, i) => html`${i > 0 ? ', ' : ''}<a href="${d}">${d}</a>`)}.</li>
<li><a href="/.well-known/openid-configuration">Discovery</a> (OpenID configuration) and the <a href="/.well-known/jwks.json">signing keys</a>.</li>
<li><a href="/sessions">Your sessions</a>: sign out of this service and applications you allowed.</li>
</ul>
</nav>
<p>Operators: the <code>docs/</code> folder of Keyhall's source describes every setting, command and behaviour; start with its README.</p>`,
  );
}
