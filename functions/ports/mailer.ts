/** Outgoing email: SES on AWS, an outbox folder on the embedded platform. */
export interface MailMessage {
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  /** Plain text body. */
  text: string;
}

export interface Mailer {
  /** Sends (or, locally, files) one message; resolves once it was accepted. */
  send(message: MailMessage): Promise<{ messageId: string }>;
}
