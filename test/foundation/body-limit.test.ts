/**
 * An oversized body is always answered: the client keeps sending an 8 MiB body (as many clients
 * do before they look at the answer) and must still read the 413, never see EPIPE/ECONNRESET.
 * A raw `net` client, so socket errors are not hidden behind an HTTP library.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_LINGER } from '../../src/http/body-limit.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, ERROR } from '../scim/helpers.js';

const BODY_SIZE = 8 * 1024 * 1024;
const PIECE = 64 * 1024;
const REPETITIONS = 20;
const BATCH = 5;

/** Resolves when the socket can take more, or is closed. */
function drained(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

interface RawResult {
  /** What the client read before the connection closed. */
  response: Buffer;
  /** The first socket error (EPIPE while sending, ECONNRESET…), if any. */
  error?: NodeJS.ErrnoException;
}

/**
 * One request over a fresh TCP connection: the head, then the body in 64 KiB pieces (with
 * Content-Length, or chunked without it), written to the end whatever arrives meanwhile. A
 * `readLate` client reads only once it has sent everything (as blocking clients do); the
 * others read while sending.
 */
function rawRequest(port: number, head: string, chunked: boolean, readLate: boolean): Promise<RawResult> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let error: NodeJS.ErrnoException | undefined;
    const socket = net.connect(port, '127.0.0.1');
    if (readLate) socket.pause();
    socket.on('data', (c: Buffer) => received.push(c));
    socket.on('error', (e) => (error ??= e));
    socket.on('close', () => resolve({ response: Buffer.concat(received), error }));
    const piece = Buffer.alloc(PIECE, 'a');
    const framed = chunked ? Buffer.concat([Buffer.from(`${PIECE.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    socket.once('connect', async () => {
      const lengthHeader = chunked ? 'transfer-encoding: chunked' : `content-length: ${BODY_SIZE}`;
      socket.write(`${head}${lengthHeader}\r\nconnection: keep-alive\r\n\r\n`);
      for (let sent = 0; sent < BODY_SIZE; sent += PIECE) {
        if (socket.destroyed || !socket.writable) return;
        if (!socket.write(framed)) await drained(socket);
      }
      if (!socket.destroyed && socket.writable && chunked) socket.write('0\r\n\r\n');
      if (readLate) socket.resume();
    });
  });
}

function parse(raw: Buffer): { status: number; headers: Record<string, string>; body: string } {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no complete HTTP response (got ${raw.length} bytes)`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length']);
  const body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4))).toString('utf8');
  assert.equal(Buffer.byteLength(body), length, 'the whole response body arrived');
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

describe('oversized request bodies are always answered with 413', () => {
  let s: TestServer;
  let apiKey: string;
  let scimToken: string;
  let host: string;
  before(async () => {
    s = await startTestServer();
    assert.ok(s.config.bodyLimit < BODY_SIZE);
    host = s.tenant.tenant.host;
    apiKey = s.tenant.platformApiKey;
    scimToken = (await createDirectory(s)).token;
  });
  after(() => s.close());

  const surfaces = [
    {
      name: '/v1/organizations (application/json)',
      head: () => `POST /v1/organizations HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\n`,
      check: (body: string) => assert.equal(JSON.parse(body).error, 'request_too_large'),
    },
    {
      name: '/token (form)',
      head: () => `POST /token HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/x-www-form-urlencoded\r\n`,
      check: (body: string) => assert.equal(JSON.parse(body).error, 'request_too_large'),
    },
    {
      name: '/scim/v2/Users (application/scim+json)',
      head: () => `POST /scim/v2/Users HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${scimToken}\r\ncontent-type: application/scim+json\r\n`,
      check: (body: string) => {
        const json = JSON.parse(body);
        assert.deepEqual(json.schemas, [ERROR]);
        assert.equal(json.status, '413');
      },
    },
  ];

  for (const surface of surfaces) {
    for (const chunked of [false, true]) {
      it(`${surface.name}, ${chunked ? 'chunked' : 'with Content-Length'}: ${REPETITIONS} × 413`, async () => {
        const failures: string[] = [];
        for (let done = 0; done < REPETITIONS; done += BATCH) {
          const results = await Promise.all(Array.from({ length: BATCH }, (_, i) => rawRequest(s.port, surface.head(), chunked, i % 2 === 0)));
          for (const [i, r] of results.entries()) {
            const client = i % 2 === 0 ? 'late reader' : 'concurrent reader';
            try {
              const res = parse(r.response);
              assert.equal(res.status, 413, res.body);
              assert.equal(res.headers.connection, 'close');
              surface.check(res.body);
              // Answered, but reset while still sending: a client that reads late loses the answer.
              assert.equal(r.error, undefined, `413 read, then socket error ${r.error?.code}`);
            } catch (err) {
              failures.push(`${client}: ${(err as Error).message.split('\n')[0]!}${r.error ? ` (${r.error.code})` : ''}`);
            }
          }
        }
        assert.deepEqual(failures, [], `${failures.length}/${REPETITIONS} requests not answered with a readable 413`);
      });
    }
  }

  /**
   * A body that never ends (Content-Length of 16 GiB): answered, drained only up to the cap, then
   * the server half-closes. A client that stops there closes cleanly; one that keeps sending
   * after the FIN is cut off once the grace period is over.
   */
  function endless(ignoreFin: boolean): Promise<{ response: Buffer; sentAtFin?: number; msAfterFin?: number }> {
    return new Promise((resolve) => {
      const received: Buffer[] = [];
      let sent = 0;
      let sentAtFin: number | undefined;
      let finAt: number | undefined;
      const socket = net.connect({ port: s.port, host: '127.0.0.1', allowHalfOpen: ignoreFin });
      socket.on('data', (c: Buffer) => received.push(c));
      socket.on('end', () => {
        sentAtFin = sent;
        finAt = Date.now();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ response: Buffer.concat(received), sentAtFin, msAfterFin: finAt && Date.now() - finAt }));
      const piece = Buffer.alloc(PIECE, 'a');
      socket.once('connect', async () => {
        socket.write(`POST /token HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${16 * 1024 ** 3}\r\n\r\n`);
        while (!socket.destroyed && socket.writable) {
          sent += PIECE;
          const flushed = socket.write(piece);
          // After the FIN the abusive client goes on slowly (the server must still cut it off).
          if (finAt) await new Promise((r) => setTimeout(r, 20));
          else if (!flushed) await drained(socket);
        }
      });
    });
  }

  it('a body that never ends: 413, drained up to the cap, then closed', async () => {
    const [polite, abusive] = await Promise.all([endless(false), endless(true)]);
    for (const r of [polite, abusive]) {
      const res = parse(r.response);
      assert.equal(res.status, 413);
      assert.equal(JSON.parse(res.body).error, 'request_too_large');
      assert.ok(r.sentAtFin !== undefined, 'the server half-closed the connection');
      assert.ok(r.sentAtFin >= DEFAULT_LINGER.maxBytes, `drained ${r.sentAtFin} bytes before closing`);
      assert.ok(r.sentAtFin < 16 * DEFAULT_LINGER.maxBytes, `drained ${r.sentAtFin} bytes before closing`);
    }
    assert.ok(polite.msAfterFin! < 1000, `a client that stops is let go at once (${polite.msAfterFin} ms)`);
    assert.ok(abusive.msAfterFin! >= DEFAULT_LINGER.graceMs - 100, `closed ${abusive.msAfterFin} ms after the FIN`);
    assert.ok(abusive.msAfterFin! < DEFAULT_LINGER.graceMs + 2000, `closed ${abusive.msAfterFin} ms after the FIN`);
  });
});
