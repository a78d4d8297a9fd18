// Bundles the React app with esbuild (its settings compiled in) and serves it.
// Run: CLIENT_ID=cli_… npx tsx server.ts
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { build } from 'esbuild';

const issuer = process.env.KEYHALL_ISSUER ?? 'http://localhost:3000';
const clientId = process.env.CLIENT_ID;
if (!clientId) throw new Error('Set CLIENT_ID to the public client registered for this app (see README.md).');
const port = Number(process.env.PORT ?? 5173);

const bundle = await build({
  entryPoints: [new URL('src/main.tsx', import.meta.url).pathname],
  bundle: true,
  write: false,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  define: { KEYHALL_ISSUER: JSON.stringify(issuer), CLIENT_ID: JSON.stringify(clientId), 'process.env.NODE_ENV': '"production"' },
});
const page = readFileSync(new URL('index.html', import.meta.url), 'utf8');
const files: Record<string, [type: string, body: string | Uint8Array]> = {
  '/': ['text/html', page],
  '/callback': ['text/html', page],
  '/app.js': ['text/javascript', bundle.outputFiles[0]!.contents],
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
  .listen(port, '127.0.0.1', () => console.log(`React app on http://localhost:${port}`));
