import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

export type Behaviour = (req: Received, res: http.ServerResponse) => void;

/** A webhook receiver on 127.0.0.1: records every request and every TCP connection. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: number;
  respond: Behaviour;
  waitFor(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export const ok: Behaviour = (_req, res) => res.writeHead(200).end('ok');
export const fail500: Behaviour = (_req, res) => res.writeHead(500).end('nope');

export async function startReceiver(respond: Behaviour = ok): Promise<Receiver> {
  const r = { received: [] as Received[], connections: 0, respond } as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' };
      r.received.push(rec);
      r.respond(rec, res);
    });
  });
  server.on('connection', () => {
    r.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  r.waitFor = async (n, ms = 10_000) => {
    const end = Date.now() + ms;
    while (r.received.length < n) {
      if (Date.now() > end) throw new Error(`receiver got ${r.received.length} of ${n} requests`);
      await new Promise((x) => setTimeout(x, 20));
    }
  };
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}
