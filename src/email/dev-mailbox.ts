/**
 * The embedded transport when no SMTP server is configured (the quick start): a message lands in
 * the dev mailbox table (listed by /v1/email_outbox) and is printed as one log line with its
 * link and code, the only log line that ever carries a link (docs/email.md). Nothing leaves the machine.
 */
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import type { EmailDevMailboxRepo } from '../storage/repos/email.js';
import type { MailTransport } from './transport.js';

export function devMailboxTransport(mailbox: EmailDevMailboxRepo, clock: Clock, log: { info: (obj: object, msg: string) => void }): MailTransport {
  return {
    name: 'dev_mailbox',
    async send(m, meta) {
      const now = clock.now();
      await mailbox.put({
        id: newId('dml', now),
        tenantId: meta.tenantId,
        outboxId: meta.outboxId,
        recipient: m.to,
        template: meta.template,
        messageId: m.messageId,
        subject: m.subject,
        text: m.text,
        html: m.html,
        createdAt: now,
      });
      log.info(
        {
          dev_mailbox: true,
          email_id: meta.outboxId,
          to: m.to,
          template: meta.template,
          ...(m.link ? { link: m.link } : {}),
          ...(m.code ? { code: m.code } : {}),
        },
        'dev mailbox (no KEYHALL_SMTP_URL, nothing sent)',
      );
      return { kind: 'sent' };
    },
    close: () => undefined,
  };
}
