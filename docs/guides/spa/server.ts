// Serves the single-page app: its page, its script, oauth4webapi and its settings.
// Run: CLIENT_ID=cli_… npx tsx docs/guides/spa/server.ts
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const issuer = process.env.KEYHALL_ISSUER ?? 'http://localhost:3000';
const clientId = process.env.CLIENT_ID;
if (!clientId) throw new Error('Set CLIENT_ID to the client registered in step 1.');
const port = Number(process.env.PORT ?? 5173);

const here = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const files: Record<string, [type: string, body: string]> = {
  '/': ['text/html', here('index.html')],
  '/callback': ['text/html', here('index.html')],
  '/app.js': ['text/javascript', here('app.js')],
  '/oauth4webapi.js': ['text/javascript', readFileSync(fileURLToPath(import.meta.resolve('oauth4webapi')), 'utf8')],
  '/config.js': ['text/javascript', `export const issuer = ${JSON.stringify(issuer)};\nexport const clientId = ${JSON.stringify(clientId)};\n`],
};

http
  .createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, {
      'content-type': `${file[0]}; charset=utf-8`,
      // Scripts from this origin only; fetch() only to Keyhall.
      'content-security-policy': `default-src 'self'; connect-src ${new URL(issuer).origin}`,
    });
    res.end(file[1]);
  })
  .listen(port, '127.0.0.1', () => console.log(`Single-page app on http://localhost:${port}`));
