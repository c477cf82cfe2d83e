import type { Mailer } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import nodemailer from 'nodemailer';

/**
 * The SMTP mailer (nodemailer) for `SMTP_URL`, or, when it is unset, a mailer that only logs
 * that an email would have been sent (never its body nor the recipient's address).
 */
export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  logger: Logger;
  timeoutMs?: number;
}): Mailer {
  if (!options.smtpUrl) {
    return {
      async send(message) {
        // The recipient is personal data: only its domain is logged.
        options.logger.info(
          { toDomain: recipientDomain(message.to), subject: message.subject, messageId: message.messageId },
          'email (SMTP_URL unset; logged only)',
        );
      },
    };
  }
  const timeoutMs = options.timeoutMs ?? 15_000;
  const transport = nodemailer.createTransport(options.smtpUrl, {
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  } as never);
  return {
    async send(message) {
      await transport.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html === undefined ? {} : { html: message.html }),
        ...(message.messageId === undefined ? {} : { messageId: message.messageId }),
      });
    },
  };
}

/** `jane@example.org` → `example.org`: enough to tell test traffic from customers, no address. */
export function recipientDomain(to: string): string {
  const at = to.lastIndexOf('@');
  return at >= 0 ? to.slice(at + 1).replace(/[>\s].*$/, '') : '(no domain)';
}
