/** Send email: sends a plain-text email to at most a bounded number of recipients. */
import { charLength, FLOW_LIMITS } from '../limits.js';
import { childPath } from '../blueprints/problems.js';
import { hasReference } from './settings-reader.js';
import { substituted, TaskFailure } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

/** An email address, checked on save and again after substitution. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const sendEmail: TaskTypeDefinition = {
  type: 'sendEmail',
  title: 'Send email',
  kind: 'data',
  check(s, ctx) {
    let count = 0;
    for (const key of ['to', 'cc', 'bcc']) {
      const list = s.texts(key, { what: 'email addresses' });
      list?.forEach((address, i) => {
        count++;
        if (!hasReference(address) && !EMAIL.test(address.trim())) {
          ctx.problem(childPath(s.at(key), i), 'invalid', `"${address}" is not an email address.`);
        }
      });
    }
    if (count === 0) {
      ctx.problem(s.at('to'), 'invalid', 'Give at least one recipient.');
    }
    if (count > FLOW_LIMITS.emailRecipients) {
      ctx.problem(
        s.path,
        'too-many',
        `At most ${FLOW_LIMITS.emailRecipients} recipients, counted across to, cc and bcc; this task has ${count}.`,
      );
    }
    s.text('subject', { required: true, what: 'a subject' });
    s.text('body', { required: true, max: FLOW_LIMITS.emailBody, what: 'the email body' });
    s.finish();
  },
  async run(ctx, services) {
    const lists = Object.fromEntries(
      (['to', 'cc', 'bcc'] as const).map((key) => {
        const written = Array.isArray(ctx.settings[key]) ? (ctx.settings[key] as unknown[]) : [];
        // A value may hold several addresses, separated by commas or semicolons.
        const addresses = written.flatMap((entry) => substituted(ctx, entry).split(/[,;]/)).map((a) => a.trim()).filter((a) => a !== '');
        for (const address of addresses) {
          if (!EMAIL.test(address)) throw new TaskFailure(`${key}: "${address}" is not an email address; check the variables it uses.`);
        }
        return [key, addresses];
      }),
    ) as Record<'to' | 'cc' | 'bcc', string[]>;
    const recipients = lists.to.length + lists.cc.length + lists.bcc.length;
    if (recipients === 0) throw new TaskFailure('The email has no recipients after substitution; check the variables it uses.');
    if (recipients > FLOW_LIMITS.emailRecipients) {
      throw new TaskFailure(`The email has ${recipients} recipients after substitution, counted across to, cc and bcc; at most ${FLOW_LIMITS.emailRecipients} are allowed.`);
    }
    // A line break in a subject would start a header of its own.
    const subject = substituted(ctx, ctx.settings.subject).replace(/[\r\n]+/g, ' ');
    const body = substituted(ctx, ctx.settings.body);
    if (charLength(body) > FLOW_LIMITS.emailBody) {
      throw new TaskFailure(`The email body has ${charLength(body)} characters after substitution; at most ${FLOW_LIMITS.emailBody} are allowed.`);
    }
    let sent: { messageId: string };
    try {
      sent = await services.platform.mailer.send({ to: lists.to, ...(lists.cc.length ? { cc: lists.cc } : {}), ...(lists.bcc.length ? { bcc: lists.bcc } : {}), subject, text: body });
    } catch (e) {
      throw new TaskFailure(`Sending the email failed: ${(e as Error).message}`);
    }
    ctx.log(`Sent the email to ${recipients} recipient${recipients === 1 ? '' : 's'} (message ${sent.messageId}).`);
    return { messageId: sent.messageId, recipients };
  },
};
