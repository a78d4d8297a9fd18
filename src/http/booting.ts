import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The listener that holds the port while the database is opened and migrated. */
export interface BootListener {
  /** The bound port (the real one when 0 was asked for). */
  port: number;
  /** Stops accepting and ends every connection, so the app can bind the same port. */
  close(): Promise<void>;
}

function answer(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close', ...extra });
  res.end(JSON.stringify(body));
}

/**
 * Binds the port before the database is migrated, so a starting instance is observable: /healthz
 * answers 200 (the process is alive: an orchestrator must not kill it for a long migration),
 * /readyz and everything else answer 503 `temporarily_unavailable` with Retry-After, and a load
 * balancer keeps sending traffic elsewhere. The app takes the port over once it is ready
 * (docs/deploy.md, "Readiness").
 */
export async function listenWhileBooting(host: string, port: number): Promise<BootListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    // Whatever body a request carries is discarded; the connection closes after the answer.
    req.resume();
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      answer(res, 200, { status: 'starting' });
      return;
    }
    answer(res, 503, { error: 'temporarily_unavailable', error_description: 'the server is starting (database migrations running)' }, { 'retry-after': '5' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
