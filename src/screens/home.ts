/** The page at / of a tenant's host (src/http/home.ts): where a person goes from there. */
import { html, type Html } from './html.js';
import { layout, type PageFrame } from './pages.js';

export function homePage(f: PageFrame, v: { issuer: string; documents: string[] }): Html {
  const { t } = f;
  const documents = html`${v.documents.map((d, i) => html`${i > 0 ? ', ' : ''}<a href="${d}">${d}</a>`)}`;
  return layout(
    f,
    html`<h1>Keyhall</h1>
<p>${t.html('home.intro', { issuer: html`<code>${v.issuer}</code>` })}</p>
<nav aria-label="${t('home.nav')}">
<ul>
<li>${t.html('home.console', { link: html`<a href="/console/">${t('home.console_link')}</a>` })}</li>
<li>${t.html('home.api', { link: html`<a href="/v1/docs">${t('home.api_link')}</a>`, documents })}</li>
<li>${t.html('home.discovery', { discovery: html`<a href="/.well-known/openid-configuration">${t('home.discovery_link')}</a>`, keys: html`<a href="/.well-known/jwks.json">${t('home.keys_link')}</a>` })}</li>
<li>${t.html('home.sessions', { link: html`<a href="/sessions">${t('home.sessions_link')}</a>` })}</li>
</ul>
</nav>
<p>${t.html('home.operators', { docs: html`<code>docs/</code>` })}</p>`,
  );
}
