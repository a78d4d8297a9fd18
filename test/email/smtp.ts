/** A real SMTP server inside the test (smtp-server): it receives every message Keyhall sends. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone. */
  decoded: string;
  header(name: string): string | undefined;
  link: string | undefined;
  code: string | undefined;
  to: string[];
}

const decodeQp = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));

export async function startSmtp() {
  const messages: Received[] = [];
  /** What the server answers the next DATA with: accept, or an SMTP error code. */
  let answer: 'ok' | number = 'ok';
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (answer !== 'ok') return callback(Object.assign(new Error(`refused ${answer}`), { responseCode: answer }));
        const raw = Buffer.concat(chunks).toString('utf8');
        const decoded = decodeQp(raw);
        const headerBlock = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
        messages.push({
          raw,
          decoded,
          header: (name) => new RegExp(`^${name}: (.*)$`, 'im').exec(headerBlock)?.[1]?.trim(),
          link: /https?:\/\/[^\s"<]+\/(?:verify-email|reset-password|invitations\/accept)\?token=[A-Za-z0-9_-]+/.exec(decoded)?.[0],
          code: /: (\d{6})\s*$/m.exec(decoded)?.[1],
          to: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    answer: (a: 'ok' | number) => {
      answer = a;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls until `fn` returns a value (messages arrive asynchronously). */
export async function waitFor<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
