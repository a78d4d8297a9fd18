// A webhook receiver that checks Keyhall's signature before it trusts a delivery.
// Run: WEBHOOK_SECRET=whsec_… npx tsx docs/guides/webhooks/receiver.ts
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the secret shown when the endpoint was registered.');
const port = Number(process.env.PORT ?? 4242);
const seen = new Set<string>(); // delivery is at least once: keep handled ids in your database

/** `webhook-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, within 5 minutes. */
function verified(header: string | undefined, raw: Buffer): boolean {
  const parts = (header ?? '').split(',').map((p) => p.trim().split('=', 2));
  const t = parts.find(([k]) => k === 't')?.[1] ?? '';
  if (!/^\d+$/.test(t) || Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret!).update(`${t}.`).update(raw).digest();
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '') && timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks); // verify the raw bytes, before parsing JSON
      if (req.method !== 'POST' || !verified(req.headers['webhook-signature'] as string | undefined, raw)) {
        console.log('refused a request without a valid signature');
        return res.writeHead(400).end();
      }
      res.writeHead(204).end(); // answer promptly; work afterwards
      const id = String(req.headers['webhook-id']);
      if (seen.has(id)) return; // a retry of a delivery already handled
      seen.add(id);
      const event = JSON.parse(raw.toString('utf8')) as { id: string; type: string; data: unknown };
      console.log(`verified ${event.type} ${event.id}: ${JSON.stringify(event.data)}`);
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`Receiving webhooks on http://127.0.0.1:${port}/webhooks`));
