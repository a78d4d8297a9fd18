/**
 * German hosted pages from a server started by the CLI (`keyhall serve`, a child process) on its
 * bootstrap tenant at http://localhost: Accept-Language, the tenant's own text and its default
 * locale set over /v1 with the key the banner prints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const h1 = (html: string) => /<h1>([\s\S]*?)<\/h1>/.exec(html)?.[1];

describe('keyhall serve: the hosted pages in German', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'info' }));
  });
  after(() => cleanup());

  it('answers Accept-Language: de in German, shows the tenant override, and follows its default locale', async () => {
    const child = spawnServer(['--port', '0'], env);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => /API key\s+sk_live_/.test(out) && /issuer\s+http:\/\/localhost:\d+/.test(out));
      const issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
      const key = /API key\s+(sk_live_\S+)/.exec(out)![1]!;
      const page = async (headers: Record<string, string> = {}) => {
        const r = await fetch(`${issuer}/login`, { headers });
        assert.equal(r.status, 200);
        return { language: r.headers.get('content-language'), text: await r.text() };
      };
      const v1 = (method: string, path: string, body: unknown) =>
        fetch(`${issuer}/v1${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

      const german = await page({ 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' });
      assert.equal(german.language, 'de');
      assert.match(german.text, /<html lang="de">/);
      assert.equal(h1(german.text), 'Anmelden');
      assert.match(german.text, /<label for="password">Passwort<\/label>/);
      assert.equal(h1((await page()).text), 'Sign in');

      assert.equal((await v1('PUT', '/branding/texts', { de: { 'login.heading': 'Willkommen' } })).status, 200);
      assert.equal(h1((await page({ 'accept-language': 'de' })).text), 'Willkommen');
      assert.equal((await v1('PUT', '/branding/locale', { default_locale: 'de' })).status, 200);
      const byDefault = await page();
      assert.equal(byDefault.language, 'de');
      assert.equal(h1(byDefault.text), 'Willkommen');
      assert.equal(h1((await page({ 'accept-language': 'en' })).text), 'Sign in');
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });
});
