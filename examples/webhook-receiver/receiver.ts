// A webhook receiver built on @keyhall/sdk: verifies each delivery's signature (raw body,
// timestamp within 5 minutes) and handles each `webhook-id` once.
// Run: WEBHOOK_SECRET=whsec_… npx tsx receiver.ts
import http from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@keyhall/sdk';

// During a rotation (docs/webhooks.md) set WEBHOOK_SECRET to "new,old": either verifies.
const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter(Boolean);
if (secrets.length === 0) throw new Error('Set WEBHOOK_SECRET to the secret shown when the endpoint was registered.');
const port = Number(process.env.PORT ?? 4242);
// Delivery is at least once: a retry repeats the webhook-id. Keep handled ids in your database.
const handled = new Set<string>();

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/webhooks') return res.writeHead(404).end();
      try {
        // The raw bytes, before any JSON parsing.
        const { webhookId, event } = await verifyWebhook(Buffer.concat(chunks), req.headers, secrets);
        res.writeHead(204).end(); // answer promptly; work afterwards
        if (handled.has(webhookId)) return console.log(`duplicate ${webhookId} ignored`);
        handled.add(webhookId);
        console.log(`verified ${event.type} ${event.id} (${webhookId}): ${JSON.stringify(event.data)}`);
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        console.log(`refused: ${err.reason}`);
        res.writeHead(400).end();
      }
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`Receiving webhooks on http://127.0.0.1:${port}/webhooks`));
