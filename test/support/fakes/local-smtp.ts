import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/**
 * A real local SMTP server (smtp-server) for tests: records every accepted message and can be
 * told to refuse the next N messages with a temporary error (451).
 */
export class LocalSmtp {
  readonly received: ReceivedMail[] = [];
  refusals = 0;
  refused = 0;
  private server!: SMTPServer;
  port = 0;

  static async start(): Promise<LocalSmtp> {
    const smtp = new LocalSmtp();
    smtp.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (smtp.refusals > 0) {
            smtp.refusals -= 1;
            smtp.refused += 1;
            const error = Object.assign(new Error('mailbox temporarily unavailable'), { responseCode: 451 });
            callback(error);
            return;
          }
          smtp.received.push({
            to: session.envelope.rcptTo.map((address) => address.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.server.listen(0, '127.0.0.1', () => resolve()));
    smtp.port = (smtp.server.server.address() as AddressInfo).port;
    return smtp;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
