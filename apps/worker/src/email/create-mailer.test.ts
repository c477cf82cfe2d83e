import type { Logger } from '@tally/platform';
import { createMailer, recipientDomain } from './create-mailer';

describe('the log-only mailer (SMTP_URL unset)', () => {
  it('logs that an email would be sent without the recipient address or the body (found by the chaos log check)', async () => {
    const lines: string[] = [];
    const logger = {
      info: (fields: unknown, message: string) => lines.push(`${JSON.stringify(fields)} ${message}`),
    } as unknown as Logger;
    const mailer = createMailer({ smtpUrl: undefined, from: 'Tally <billing@tally.test>', logger });
    await mailer.send({
      to: 'jane.doe@example.org',
      subject: 'Your tokens',
      text: 'secret body text',
      messageId: '<m1@tally>',
    });
    expect(lines).toEqual([
      '{"toDomain":"example.org","subject":"Your tokens","messageId":"<m1@tally>"} email (SMTP_URL unset; logged only)',
    ]);
  });

  it('reads the domain of plain and display-name addresses', () => {
    expect(recipientDomain('a@b.example')).toBe('b.example');
    expect(recipientDomain('Jane <jane@example.org>')).toBe('example.org');
    expect(recipientDomain('nobody')).toBe('(no domain)');
  });
});
