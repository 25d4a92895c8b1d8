/**
 * Schedules, the pure part: what a console may send (label, recurrence shapes, time zone, values),
 * the expressions croner and EventBridge Scheduler fire, and the next run, across DST changes.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/domain/shared/errors.js';
import type { FlowDefinition } from '../../../functions/domain/flows/blueprints/model.js';
import type { Recurrence, ScheduleRecord } from '../../../functions/domain/flows/records.js';
import {
  awsScheduleExpression,
  checkLabel,
  checkRecurrence,
  checkTimeZone,
  cronOf,
  defaultPresetValues,
  nextRun,
  scheduleValues,
} from '../../../functions/domain/flows/schedules/schedules.js';

const refused = (fn: () => unknown, message: RegExp) => {
  expect(fn).toThrow(ValidationError);
  expect(fn).toThrow(message);
};

type Timed = Pick<ScheduleRecord, 'recurrence' | 'timeZone' | 'createdAt'>;
const schedule = (recurrence: Recurrence, timeZone = 'Europe/Amsterdam', createdAt = '2026-01-01T00:00:00.000Z'): Timed => ({ recurrence, timeZone, createdAt });

/** The next `n` runs after `from`, as ISO strings. */
function runs(s: Timed, from: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < n; i++) {
    at = nextRun(s, at);
    out.push(at.toISOString());
  }
  return out;
}

describe('label', () => {
  it('takes 1 to 80 characters, counting code points', () => {
    expect(checkLabel('Nightly')).toBe('Nightly');
    expect(checkLabel('x'.repeat(80))).toHaveLength(80);
    expect(checkLabel('🙂'.repeat(80))).toBe('🙂'.repeat(80));
    refused(() => checkLabel('x'.repeat(81)), /at most 80 characters; this one has 81/);
    refused(() => checkLabel(''), /give the schedule a label/);
    refused(() => checkLabel('   '), /give the schedule a label/);
    refused(() => checkLabel(undefined), /label/);
  });
});

describe('recurrence', () => {
  it('accepts the five shapes', () => {
    expect(checkRecurrence({ every: 'minutes', interval: 15 })).toEqual({ every: 'minutes', interval: 15 });
    expect(checkRecurrence({ every: 'hours', interval: 23 })).toEqual({ every: 'hours', interval: 23 });
    expect(checkRecurrence({ every: 'day', at: '00:00' })).toEqual({ every: 'day', at: '00:00' });
    expect(checkRecurrence({ every: 'week', at: '23:59', weekday: 0 })).toEqual({ every: 'week', at: '23:59', weekday: 0 });
    expect(checkRecurrence({ every: 'month', at: '02:30', dayOfMonth: 31 })).toEqual({ every: 'month', at: '02:30', dayOfMonth: 31 });
  });

  it('refuses what is out of bounds, saying what to give', () => {
    refused(() => checkRecurrence(undefined), /recurrence: give one of/);
    refused(() => checkRecurrence({ every: 'year' }), /recurrence.every: use "minutes", "hours", "day", "week" or "month"/);
    refused(() => checkRecurrence({ every: 'minutes', interval: 0 }), /recurrence.interval: .* from 1 to 59 .*"hours"/);
    refused(() => checkRecurrence({ every: 'minutes', interval: 60 }), /from 1 to 59/);
    refused(() => checkRecurrence({ every: 'minutes', interval: 1.5 }), /whole number/);
    refused(() => checkRecurrence({ every: 'minutes', interval: '5' }), /whole number/);
    refused(() => checkRecurrence({ every: 'hours', interval: 24 }), /from 1 to 23 .*"day"/);
    refused(() => checkRecurrence({ every: 'day', at: '24:00' }), /recurrence.at: .*"HH:MM"/);
    refused(() => checkRecurrence({ every: 'day', at: '2:30' }), /"HH:MM"/);
    refused(() => checkRecurrence({ every: 'day' }), /"HH:MM"/);
    refused(() => checkRecurrence({ every: 'week', at: '09:00', weekday: 7 }), /recurrence.weekday: .*0 \(Sunday\) to 6 \(Saturday\)/);
    refused(() => checkRecurrence({ every: 'month', at: '09:00', dayOfMonth: 0 }), /recurrence.dayOfMonth: .*1 to 31/);
    refused(() => checkRecurrence({ every: 'month', at: '09:00', dayOfMonth: 32 }), /1 to 31/);
    refused(() => checkRecurrence({ every: 'day', at: '09:00', interval: 2 }), /"interval" does not apply to every day; give only "every", "at"/);
    refused(() => checkRecurrence({ every: 'minutes', interval: 5, at: '09:00' }), /"at" does not apply to every minutes/);
  });
});

describe('time zone', () => {
  it('takes IANA names as given, correcting their case', () => {
    expect(checkTimeZone('Europe/Amsterdam')).toBe('Europe/Amsterdam');
    expect(checkTimeZone('America/Argentina/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires');
    expect(checkTimeZone('UTC')).toBe('UTC');
    expect(checkTimeZone('utc')).toBe('UTC');
    expect(checkTimeZone('europe/amsterdam')).toBe('Europe/Amsterdam');
    // Not ICU's canonical names (Asia/Calcutta, Europe/Kiev).
    expect(checkTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(checkTimeZone('Europe/Kyiv')).toBe('Europe/Kyiv');
  });

  it('refuses unknown names, offsets and non-text', () => {
    refused(() => checkTimeZone('Mars/Olympus_Mons'), /timeZone: give an IANA time zone name .*"Mars\/Olympus_Mons" is not one/);
    refused(() => checkTimeZone('+01:00'), /IANA time zone name/);
    refused(() => checkTimeZone('Europe/Amsterdam '), /IANA/);
    refused(() => checkTimeZone(''), /IANA/);
    refused(() => checkTimeZone(60), /IANA/);
  });
});

describe('values', () => {
  const definition = {
    variables: [
      { name: 'target', required: true, allowedOptions: ['test', 'prod'] },
      { name: 'note', required: false, allowedOptions: [] },
    ],
    outputVariables: [{ name: 'out' }],
    maskedValues: [{ name: 'secret' }],
    presets: [
      { name: 'Other', values: { target: 'test' }, default: false },
      { name: 'Production', values: { target: 'prod', note: 'nightly' }, default: true },
    ],
  } as unknown as FlowDefinition;

  it('prefills from the default preset when no values are given', () => {
    expect(defaultPresetValues(definition)).toEqual({ target: 'prod', note: 'nightly' });
    expect(scheduleValues(definition, undefined, defaultPresetValues(definition))).toEqual({ target: 'prod', note: 'nightly' });
    expect(defaultPresetValues({ ...definition, presets: [] })).toBeUndefined();
  });

  it('checks given values as a run start does', () => {
    expect(scheduleValues(definition, { target: 'test', note: 42 }, undefined)).toEqual({ target: 'test', note: '42' });
    refused(() => scheduleValues(definition, { target: 'staging' }, undefined), /"staging" is not one of its allowed options/);
    refused(() => scheduleValues(definition, { target: 'test', nope: 'x' }, undefined), /no variable "nope"/);
    refused(() => scheduleValues(definition, { target: 'test', out: 'x' }, undefined), /output variable/);
    refused(() => scheduleValues(definition, { target: 'test', secret: 'x' }, undefined), /masked value/);
    refused(() => scheduleValues(definition, { target: 'test', system_platformToken: 'x' }, undefined), /system variable/);
    refused(() => scheduleValues(definition, ['x'], undefined), /values: an object/);
  });

  it('needs a value for every required variable', () => {
    refused(() => scheduleValues(definition, { note: 'x' }, undefined), /values: the required variable "target" needs a value/);
    refused(() => scheduleValues({ ...definition, presets: [] }, undefined, undefined), /"target" needs a value/);
  });
});

describe('expressions', () => {
  it('gives croner a 5-field cron for day, week and month, and none for intervals', () => {
    expect(cronOf({ every: 'day', at: '02:30' })).toBe('30 2 * * *');
    expect(cronOf({ every: 'week', at: '09:05', weekday: 1 })).toBe('5 9 * * 1');
    expect(cronOf({ every: 'month', at: '23:00', dayOfMonth: 31 })).toBe('0 23 31 * *');
    expect(cronOf({ every: 'minutes', interval: 5 })).toBeNull();
  });

  it('gives EventBridge Scheduler rate() for intervals and cron() with a ? day field otherwise', () => {
    expect(awsScheduleExpression({ every: 'minutes', interval: 1 })).toBe('rate(1 minute)');
    expect(awsScheduleExpression({ every: 'minutes', interval: 15 })).toBe('rate(15 minutes)');
    expect(awsScheduleExpression({ every: 'hours', interval: 1 })).toBe('rate(1 hour)');
    expect(awsScheduleExpression({ every: 'hours', interval: 6 })).toBe('rate(6 hours)');
    expect(awsScheduleExpression({ every: 'day', at: '02:30' })).toBe('cron(30 2 * * ? *)');
    expect(awsScheduleExpression({ every: 'week', at: '09:05', weekday: 0 })).toBe('cron(5 9 ? * SUN *)');
    expect(awsScheduleExpression({ every: 'week', at: '09:05', weekday: 6 })).toBe('cron(5 9 ? * SAT *)');
    expect(awsScheduleExpression({ every: 'month', at: '23:00', dayOfMonth: 1 })).toBe('cron(0 23 1 * ? *)');
  });
});

describe('next run', () => {
  it('every N minutes counts from the creation (to the whole minute), strictly after the given time', () => {
    const s = schedule({ every: 'minutes', interval: 15 }, 'UTC', '2026-05-04T10:07:31.500Z');
    expect(runs(s, '2026-05-04T10:07:31.500Z', 3)).toEqual(['2026-05-04T10:22:00.000Z', '2026-05-04T10:37:00.000Z', '2026-05-04T10:52:00.000Z']);
    expect(nextRun(s, new Date('2026-05-04T10:22:00.000Z')).toISOString()).toBe('2026-05-04T10:37:00.000Z');
    expect(nextRun(s, new Date('2026-05-04T10:21:59.999Z')).toISOString()).toBe('2026-05-04T10:22:00.000Z');
    expect(nextRun(s, new Date('2026-05-05T00:00:00.000Z')).toISOString()).toBe('2026-05-05T00:07:00.000Z');
    // Before the creation (a clock set back): the first run after it.
    expect(nextRun(s, new Date('2026-05-01T00:00:00.000Z')).toISOString()).toBe('2026-05-04T10:22:00.000Z');
    // Every minute.
    expect(runs(schedule({ every: 'minutes', interval: 1 }, 'UTC', '2026-05-04T10:07:31Z'), '2026-05-04T10:07:31Z', 2)).toEqual(['2026-05-04T10:08:00.000Z', '2026-05-04T10:09:00.000Z']);
  });

  it('every N hours is real time: DST changes move it on the wall clock, not in elapsed time', () => {
    const s = schedule({ every: 'hours', interval: 1 }, 'Europe/Amsterdam', '2026-10-24T22:00:00Z');
    // 2026-10-25 03:00 CEST becomes 02:00 CET (01:00Z): still one hour apart.
    expect(runs(s, '2026-10-24T23:30:00Z', 4)).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z', '2026-10-25T03:00:00.000Z']);
    const six = schedule({ every: 'hours', interval: 6 }, 'UTC', '2026-03-28T20:00:00Z');
    expect(runs(six, '2026-03-28T20:00:00Z', 3)).toEqual(['2026-03-29T02:00:00.000Z', '2026-03-29T08:00:00.000Z', '2026-03-29T14:00:00.000Z']);
  });

  it('every day keeps its local time across DST (09:00 in Amsterdam: 08:00Z in winter, 07:00Z in summer)', () => {
    const s = schedule({ every: 'day', at: '09:00' });
    expect(runs(s, '2026-03-28T00:00:00Z', 3)).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    expect(runs(s, '2026-10-24T12:00:00Z', 2)).toEqual(['2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('a daily 02:30 in Amsterdam skips the spring-forward day (02:30 does not exist) and fires once on the fall-back day', () => {
    const s = schedule({ every: 'day', at: '02:30' });
    // 29 March 2026: 02:00 CET jumps to 03:00 CEST. 28th at 01:30Z (CET), 30th at 00:30Z (CEST).
    expect(runs(s, '2026-03-27T12:00:00Z', 3)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    // 25 October 2026: 03:00 CEST falls back to 02:00 CET, so 02:30 happens at 00:30Z and 01:30Z: only the first.
    expect(runs(s, '2026-10-23T12:00:00Z', 4)).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
    // Asked from between the two occurrences: not the second one.
    expect(nextRun(s, new Date('2026-10-25T01:00:00Z')).toISOString()).toBe('2026-10-26T01:30:00.000Z');
  });

  it('every week fires on its weekday at the local time', () => {
    // Mondays at 09:30 in New York (DST from 8 March 2026).
    const s = schedule({ every: 'week', at: '09:30', weekday: 1 }, 'America/New_York');
    expect(runs(s, '2026-03-01T00:00:00Z', 3)).toEqual(['2026-03-02T14:30:00.000Z', '2026-03-09T13:30:00.000Z', '2026-03-16T13:30:00.000Z']);
    // Sunday is 0.
    expect(runs(schedule({ every: 'week', at: '00:00', weekday: 0 }, 'UTC'), '2026-05-04T00:00:00Z', 1)).toEqual(['2026-05-10T00:00:00.000Z']);
  });

  it('every month fires on its day, skipping months without it', () => {
    const s = schedule({ every: 'month', at: '02:30', dayOfMonth: 31 }, 'UTC');
    expect(runs(s, '2026-01-01T00:00:00Z', 4)).toEqual(['2026-01-31T02:30:00.000Z', '2026-03-31T02:30:00.000Z', '2026-05-31T02:30:00.000Z', '2026-07-31T02:30:00.000Z']);
    const first = schedule({ every: 'month', at: '06:00', dayOfMonth: 1 }, 'Asia/Tokyo');
    expect(runs(first, '2026-01-15T00:00:00Z', 2)).toEqual(['2026-01-31T21:00:00.000Z', '2026-02-28T21:00:00.000Z']);
    // The 29th of February only in leap years.
    expect(runs(schedule({ every: 'month', at: '12:00', dayOfMonth: 29 }, 'UTC'), '2027-01-30T00:00:00Z', 2)).toEqual(['2027-03-29T12:00:00.000Z', '2027-04-29T12:00:00.000Z']);
  });

  it('is strictly after the given instant', () => {
    const s = schedule({ every: 'day', at: '02:30' }, 'UTC');
    expect(nextRun(s, new Date('2026-05-04T02:30:00.000Z')).toISOString()).toBe('2026-05-05T02:30:00.000Z');
    expect(nextRun(s, new Date('2026-05-04T02:29:59.999Z')).toISOString()).toBe('2026-05-04T02:30:00.000Z');
  });
});
