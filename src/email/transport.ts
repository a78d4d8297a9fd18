/**
 * How a rendered message leaves: SMTP through nodemailer (KEYHALL_SMTP_URL), or the embedded dev
 * mailbox when none is set. A transport answers sent, retry (an SMTP 4xx, no connection, a
 * timeout) or refused (an SMTP 5xx: the message is failed at once).
 */
import nodemailer from 'nodemailer';

/** What the outbox row holds until the message is sent: the whole message, as every attempt sends it. */
export interface OutgoingEmail {
  from: string;
  replyTo: string | null;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The Message-ID header, the same on every attempt (a receiver deduplicates on it). */
  messageId: string;
  /** The link the message carries, if any: printed only in the dev mailbox's own log line. */
  link?: string;
  /** The one-time code the message carries, if any: printed only in the dev mailbox's own log line. */
  code?: string;
}

export type SendResult = { kind: 'sent' } | { kind: 'retry'; error: string } | { kind: 'refused'; error: string };

export interface MailTransport {
  /** `smtp` or `dev_mailbox`. */
  readonly name: string;
  send(m: OutgoingEmail, meta: { tenantId: string; outboxId: string; template: string }): Promise<SendResult>;
  close(): void;
}

/** The SMTP reply code of a nodemailer error, if the server answered one. */
const replyCode = (err: unknown): number | undefined => {
  const code = (err as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' ? code : undefined;
};

/** Only the server's reply code and nodemailer's error code: never the message, which may quote it. */
const describe = (err: unknown): string => {
  const code = replyCode(err);
  const kind = (err as { code?: unknown }).code;
  return [code !== undefined ? `smtp ${code}` : undefined, typeof kind === 'string' ? kind : undefined].filter(Boolean).join(' ') || 'send failed';
};

export function smtpTransport(url: string, timeoutMs = 30_000): MailTransport {
  const u = new URL(url);
  const secure = u.protocol === 'smtps:';
  const transporter = nodemailer.createTransport({
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    // smtps: TLS from the first byte; smtp: STARTTLS whenever the server offers it.
    secure,
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    name: 'smtp',
    async send(m) {
      try {
        await transporter.sendMail({
          from: m.from,
          to: m.to,
          ...(m.replyTo ? { replyTo: m.replyTo } : {}),
          subject: m.subject,
          text: m.text,
          html: m.html,
          messageId: m.messageId,
        });
        return { kind: 'sent' };
      } catch (err) {
        const code = replyCode(err);
        return code !== undefined && code >= 500 && code < 600 ? { kind: 'refused', error: describe(err) } : { kind: 'retry', error: describe(err) };
      }
    },
    close: () => transporter.close(),
  };
}
