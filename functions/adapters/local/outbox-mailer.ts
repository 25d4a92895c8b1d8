import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailMessage, Mailer } from '../../ports/mailer.js';

/**
 * The embedded platform does not send email: each message becomes one JSON file in the outbox
 * folder (DATA_DIR/outbox), named so that a listing sorts by time.
 */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(message: MailMessage): Promise<{ messageId: string }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const messageId = randomUUID();
    const sentAt = new Date().toISOString();
    const file = join(this.dir, `${sentAt.replace(/[:.]/g, '-')}-${messageId}.json`);
    await writeFile(file, `${JSON.stringify({ messageId, sentAt, from: this.from, ...message }, null, 2)}\n`, { mode: 0o600 });
    return { messageId };
  }
}
