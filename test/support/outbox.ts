/** Reads the embedded platform's outbox: one `.eml` file per message. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface OutboxMessage {
  file: string;
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
}

const addresses = (value: string | undefined) => (value ? value.split(',').map((a) => a.trim()).filter(Boolean) : []);

/** Decodes RFC 2047 `=?UTF-8?B?...?=` words. */
const decodeWords = (value: string) => value.replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=/gi, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));

export function parseEml(file: string, content: string): OutboxMessage {
  const split = content.indexOf('\r\n\r\n');
  const head = content.slice(0, split);
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return {
    file,
    messageId: (headers.get('message-id') ?? '').replace(/^<|@.*$/g, ''),
    from: headers.get('from') ?? '',
    to: addresses(headers.get('to')),
    cc: addresses(headers.get('cc')),
    bcc: addresses(headers.get('bcc')),
    subject: decodeWords(headers.get('subject') ?? ''),
    text: content.slice(split + 4).replace(/\r\n/g, '\n'),
  };
}

/** Every message in `<dataDir>/outbox`, oldest first. */
export async function readOutbox(dataDir: string): Promise<OutboxMessage[]> {
  const dir = join(dataDir, 'outbox');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort();
  return Promise.all(files.map(async (f) => parseEml(f, await readFile(join(dir, f), 'utf8'))));
}
