import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailMessage, Mailer } from '../../ports/mailer.js';

/** An RFC 2047 encoded word for a header value that is not plain ASCII. */
const headerText = (value: string): string =>
  /^[\x20-\x7E]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;

/** The message as an RFC 5322 file (Bcc kept, since nobody receives this copy but its reader). */
export function toEml(message: MailMessage, from: string, messageId: string, date: Date): string {
  const lines = [
    `Message-ID: <${messageId}@outbox.local>`,
    `Date: ${date.toUTCString()}`,
    `From: ${from}`,
    `To: ${message.to.join(', ')}`,
    ...(message.cc?.length ? [`Cc: ${message.cc.join(', ')}`] : []),
    ...(message.bcc?.length ? [`Bcc: ${message.bcc.join(', ')}`] : []),
    `Subject: ${headerText(message.subject.replace(/[\r\n]+/g, ' '))}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    message.text.replace(/\r?\n/g, '\r\n'),
  ];
  return lines.join('\r\n');
}

/**
 * The embedded platform does not send email: each message becomes one `.eml` file in the outbox
 * folder (DATA_DIR/outbox), named so that a listing sorts by time; any mail program opens them.
 */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(message: MailMessage): Promise<{ messageId: string }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const messageId = randomUUID();
    const now = new Date();
    const file = join(this.dir, `${now.toISOString().replace(/[:.]/g, '-')}-${messageId}.eml`);
    await writeFile(file, toEml(message, this.from, messageId, now), { mode: 0o600 });
    return { messageId };
  }
}
