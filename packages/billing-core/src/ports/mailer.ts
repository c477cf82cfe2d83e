/** Sends one email. Never called inside a database transaction. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string; html?: string; messageId?: string }): Promise<void>;
}
