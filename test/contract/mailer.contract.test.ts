/**
 * The Mailer contract, run against both adapters: the outbox (one `.eml` file per message in a
 * temporary folder, read back here) and SES v2. SES has no local stand-in, so a recording fake
 * SESv2Client answers SendEmail the way SES does (a MessageId) and keeps what it was sent.
 */
import { type SendEmailCommandInput, SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SesMailer } from '../../functions/adapters/aws/ses-mailer.js';
import { OutboxMailer } from '../../functions/adapters/local/outbox-mailer.js';
import type { MailMessage, Mailer } from '../../functions/ports/mailer.js';

const FROM = 'Linked Data Platform <noreply@example.org>';

/** A message as its recipients get it, read back from where each adapter put it. */
interface Delivered {
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
}

interface MailerHarness {
  mailer: Mailer;
  delivered(): Promise<Delivered[]>;
}

// ---- Outbox: parse the .eml files back --------------------------------------------------------

const decodeWord = (value: string): string =>
  value.replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
const addresses = (value: string | undefined): string[] => (value ? value.split(', ') : []);

function parseEml(eml: string): Delivered {
  const split = eml.indexOf('\r\n\r\n');
  const headers = new Map<string, string>();
  for (const line of eml.slice(0, split).split('\r\n')) {
    const colon = line.indexOf(': ');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 2));
  }
  return {
    messageId: /^<(.*)@outbox\.local>$/.exec(headers.get('message-id') ?? '')?.[1] ?? '',
    from: headers.get('from') ?? '',
    to: addresses(headers.get('to')),
    cc: addresses(headers.get('cc')),
    bcc: addresses(headers.get('bcc')),
    subject: decodeWord(headers.get('subject') ?? ''),
    text: eml.slice(split + 4).replace(/\r\n/g, '\n'),
  };
}

const outboxDirs: string[] = [];

async function outboxHarness(): Promise<MailerHarness & { dir: string }> {
  const dir = join(await mkdtemp(join(tmpdir(), 'ldp-outbox-')), 'outbox');
  outboxDirs.push(dir);
  return {
    dir,
    mailer: new OutboxMailer(dir, FROM),
    async delivered() {
      const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort();
      return Promise.all(files.map(async (f) => parseEml(await readFile(join(dir, f), 'utf8'))));
    },
  };
}

// ---- SES: a recording fake of SendEmail ----------------------------------------------------------

function fakeSes() {
  const sent: { input: SendEmailCommandInput; messageId: string }[] = [];
  const client = {
    async send(command: object) {
      if (!(command instanceof SendEmailCommand)) throw new Error(`unexpected SES call ${command.constructor.name}`);
      const messageId = `0100018f-${String(sent.length + 1).padStart(4, '0')}-ses`;
      sent.push({ input: command.input, messageId });
      return { MessageId: messageId, $metadata: {} };
    },
  };
  return { client: client as unknown as SESv2Client, sent };
}

async function sesHarness(): Promise<MailerHarness & { sent: ReturnType<typeof fakeSes>['sent'] }> {
  const { client, sent } = fakeSes();
  return {
    sent,
    mailer: new SesMailer(client, FROM),
    async delivered() {
      return sent.map(({ input, messageId }) => ({
        messageId,
        from: input.FromEmailAddress ?? '',
        to: input.Destination?.ToAddresses ?? [],
        cc: input.Destination?.CcAddresses ?? [],
        bcc: input.Destination?.BccAddresses ?? [],
        subject: input.Content?.Simple?.Subject?.Data ?? '',
        text: input.Content?.Simple?.Body?.Text?.Data ?? '',
      }));
    },
  };
}

afterAll(async () => {
  for (const dir of outboxDirs) await rm(join(dir, '..'), { recursive: true, force: true });
});

const message = (extra: Partial<MailMessage> = {}): MailMessage => ({
  to: ['alice@example.org'],
  subject: 'Flow "Nightly load" failed',
  text: 'The run failed at task "query".\nSee the run for its log.',
  ...extra,
});

const ADAPTERS: [string, () => Promise<MailerHarness>][] = [
  ['OutboxMailer (.eml files)', outboxHarness],
  ['SesMailer (recording fake of SES v2)', sesHarness],
];

describe.each(ADAPTERS)('Mailer contract: %s', (_name, create) => {
  let harness: MailerHarness;
  beforeEach(async () => {
    harness = await create();
  });

  it('accepts a message and answers the id it was accepted under', async () => {
    const { messageId } = await harness.mailer.send(message());
    expect(messageId).not.toBe('');
    expect((await harness.delivered()).map((m) => m.messageId)).toEqual([messageId]);
  });

  it('delivers to, cc, bcc, subject and the plain-text body, from the instance sender', async () => {
    await harness.mailer.send(message({ to: ['alice@example.org', 'bob@example.org'], cc: ['carol@example.org'], bcc: ['audit@example.org'] }));
    const [delivered] = await harness.delivered();
    expect(delivered).toMatchObject({
      from: FROM,
      to: ['alice@example.org', 'bob@example.org'],
      cc: ['carol@example.org'],
      bcc: ['audit@example.org'],
      subject: 'Flow "Nightly load" failed',
      text: 'The run failed at task "query".\nSee the run for its log.',
    });
  });

  it('sends to nobody else when cc and bcc are left out', async () => {
    await harness.mailer.send(message());
    const [delivered] = await harness.delivered();
    expect(delivered!.cc).toEqual([]);
    expect(delivered!.bcc).toEqual([]);
  });

  it('keeps a subject and body outside ASCII intact', async () => {
    await harness.mailer.send(message({ subject: 'Überprüfung fehlgeschlagen ✗ 数据', text: 'Ärger mit „Daten“ — 𝄞\nzweite Zeile' }));
    const [delivered] = await harness.delivered();
    expect(delivered!.subject).toBe('Überprüfung fehlgeschlagen ✗ 数据');
    expect(delivered!.text).toBe('Ärger mit „Daten“ — 𝄞\nzweite Zeile');
  });

  it('gives every message its own id', async () => {
    const first = await harness.mailer.send(message());
    const second = await harness.mailer.send(message({ subject: 'Second' }));
    expect(first.messageId).not.toBe(second.messageId);
    expect((await harness.delivered()).map((m) => m.messageId).sort()).toEqual([first.messageId, second.messageId].sort());
  });
});

describe('OutboxMailer specifics', () => {
  it('writes one private .eml file per message, named by time and id, creating the folder', async () => {
    const { dir, mailer } = await outboxHarness();
    const { messageId } = await mailer.send(message());
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z-${messageId}\\.eml$`));
    expect((await stat(join(dir, files[0]!))).mode & 0o777).toBe(0o600);
  });

  it('folds line breaks in a subject into spaces, so a subject cannot add a header', async () => {
    const { mailer, delivered } = await outboxHarness();
    await mailer.send(message({ subject: 'Hello\r\nBcc: mallory@example.org' }));
    const [mail] = await delivered();
    expect(mail!.subject).toBe('Hello Bcc: mallory@example.org');
    expect(mail!.bcc).toEqual([]);
  });
});

describe('SesMailer specifics', () => {
  it('sends one SendEmail with a simple UTF-8 text message', async () => {
    const { mailer, sent } = await sesHarness();
    await mailer.send(message());
    expect(sent).toHaveLength(1);
    expect(sent[0]!.input.Content).toEqual({
      Simple: {
        Subject: { Data: 'Flow "Nightly load" failed', Charset: 'UTF-8' },
        Body: { Text: { Data: 'The run failed at task "query".\nSee the run for its log.', Charset: 'UTF-8' } },
      },
    });
  });
});
