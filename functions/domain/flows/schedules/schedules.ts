/**
 * Schedules, the pure part: checking what a console sends, the expressions both runtimes fire
 * (croner on the embedded platform, EventBridge Scheduler on AWS) and the next time a schedule
 * fires.
 *
 * Decisions (kept identical on both runtimes, so the embedded platform fires when AWS would):
 * - Every N minutes / hours is an elapsed-time interval anchored on the schedule's creation
 *   (whole minute): created 10:07:31 with every 15 minutes, it fires 10:22, 10:37, ... DST does not
 *   move it (an interval is real time). On AWS: `rate(N minutes)` with `StartDate` = the next run.
 * - Every day / week / month fires at a wall-clock time in the schedule's time zone (cron), so
 *   09:00 stays 09:00 local across DST changes. A time that does not exist that day (the hour
 *   the clocks spring forward) is skipped; a time that occurs twice (fall back) fires once, at
 *   the first occurrence. This is what EventBridge Scheduler does with cron schedules.
 * - Every month on day 29, 30 or 31 skips the months without that day (cron semantics; no single
 *   EventBridge expression can say "the 31st, or the last day when the month is shorter").
 */
import { Cron } from 'croner';
import { ValidationError } from '../../shared/errors.js';
import { checkStartValues } from '../runs/start-values.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import type { FlowDefinition } from '../blueprints/model.js';
import type { Recurrence, ScheduleRecord } from '../records.js';

export const RECURRENCE_KINDS = ['minutes', 'hours', 'day', 'week', 'month'] as const;
export const INTERVAL_BOUNDS = { minutes: { min: 1, max: 59 }, hours: { min: 1, max: 23 } } as const;
export const DEFAULT_TIME_ZONE = 'UTC';
const WEEKDAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

type IntervalRecurrence = Extract<Recurrence, { every: 'minutes' | 'hours' }>;
type CalendarRecurrence = Exclude<Recurrence, IntervalRecurrence>;

const isInterval = (r: Recurrence): r is IntervalRecurrence => r.every === 'minutes' || r.every === 'hours';

export function checkLabel(label: unknown): string {
  if (typeof label !== 'string' || label.trim() === '') throw new ValidationError(`label: give the schedule a label (1 to ${FLOW_LIMITS.scheduleLabel} characters).`);
  const n = charLength(label);
  if (n > FLOW_LIMITS.scheduleLabel) throw new ValidationError(`label: a schedule label has at most ${FLOW_LIMITS.scheduleLabel} characters; this one has ${n}.`);
  return label;
}

const wholeIn = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Checks a recurrence as received; every message names the field and what to give. */
export function checkRecurrence(input: unknown): Recurrence {
  const shapes =
    '{"every": "minutes", "interval": 1-59}, {"every": "hours", "interval": 1-23}, {"every": "day", "at": "HH:MM"}, {"every": "week", "at": "HH:MM", "weekday": 0-6 (0 is Sunday)} or {"every": "month", "at": "HH:MM", "dayOfMonth": 1-31}';
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new ValidationError(`recurrence: give one of ${shapes}.`);
  const r = input as Record<string, unknown>;
  if (!(RECURRENCE_KINDS as readonly unknown[]).includes(r.every)) throw new ValidationError(`recurrence.every: use "minutes", "hours", "day", "week" or "month"; a recurrence is one of ${shapes}.`);
  const every = r.every as Recurrence['every'];
  const allowed: Record<Recurrence['every'], string[]> = {
    minutes: ['every', 'interval'],
    hours: ['every', 'interval'],
    day: ['every', 'at'],
    week: ['every', 'at', 'weekday'],
    month: ['every', 'at', 'dayOfMonth'],
  };
  const extra = Object.keys(r).filter((k) => !allowed[every].includes(k));
  if (extra.length > 0) {
    throw new ValidationError(`recurrence: ${extra.map((k) => `"${k}"`).join(', ')} does not apply to every ${every}; give only ${allowed[every].map((k) => `"${k}"`).join(', ')}.`);
  }
  if (every === 'minutes' || every === 'hours') {
    const { min, max } = INTERVAL_BOUNDS[every];
    if (!wholeIn(r.interval, min, max)) {
      const longer = every === 'minutes' ? ' (for longer intervals use {"every": "hours"})' : ' (for longer intervals use {"every": "day"})';
      throw new ValidationError(`recurrence.interval: every N ${every} takes a whole number N from ${min} to ${max}${longer}.`);
    }
    return { every, interval: r.interval };
  }
  const at = checkTimeOfDay(r.at);
  if (every === 'day') return { every, at };
  if (every === 'week') {
    if (!wholeIn(r.weekday, 0, 6)) throw new ValidationError('recurrence.weekday: a whole number from 0 (Sunday) to 6 (Saturday).');
    return { every, at, weekday: r.weekday };
  }
  if (!wholeIn(r.dayOfMonth, 1, 31)) {
    throw new ValidationError('recurrence.dayOfMonth: a whole number from 1 to 31 (months without that day are skipped).');
  }
  return { every, at, dayOfMonth: r.dayOfMonth };
}

function checkTimeOfDay(at: unknown): string {
  const m = typeof at === 'string' ? /^([01][0-9]|2[0-3]):([0-5][0-9])$/.exec(at) : null;
  if (!m) throw new ValidationError('recurrence.at: the time of day as "HH:MM" on a 24-hour clock, e.g. "02:30" or "17:05".');
  return at as string;
}

let knownZones: string[] | undefined;

/**
 * An IANA time zone name, as given (its case corrected when it differs from a known name); a 400
 * saying what to give otherwise. Not ICU's canonical form, which would turn Asia/Kolkata into
 * Asia/Calcutta.
 */
export function checkTimeZone(input: unknown): string {
  const refuse = () =>
    new ValidationError(`timeZone: give an IANA time zone name such as "Europe/Amsterdam", "America/New_York" or "UTC"${typeof input === 'string' ? `; "${input.slice(0, 64)}" is not one` : ''}.`);
  // Names only: EventBridge Scheduler takes no UTC offsets such as "+01:00".
  if (typeof input !== 'string' || input.length > 64 || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(input)) throw refuse();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: input });
  } catch {
    throw refuse();
  }
  knownZones ??= ['UTC', ...Intl.supportedValuesOf('timeZone')];
  const lower = input.toLowerCase();
  return knownZones.find((z) => z.toLowerCase() === lower) ?? input;
}

/**
 * The values scheduled runs use: checked like values given at run start. On create, values left
 * out are prefilled from the default preset; the required variables must end up with a value
 * (otherwise no scheduled run could start).
 */
export function scheduleValues(definition: FlowDefinition, given: unknown, prefill: Record<string, string> | undefined): Record<string, string> {
  let values: Record<string, string>;
  if (given === undefined) values = { ...(prefill ?? {}) };
  else {
    if (!given || typeof given !== 'object' || Array.isArray(given)) throw new ValidationError('values: an object { "variable": "value" }.');
    values = checkStartValues(definition, given as Record<string, unknown>);
  }
  const missing = definition.variables.filter((v) => v.required && !values[v.name]).map((v) => `"${v.name}"`);
  if (missing.length > 0) {
    throw new ValidationError(
      `values: the required variable${missing.length > 1 ? 's' : ''} ${missing.join(', ')} need${missing.length > 1 ? '' : 's'} a value, or no scheduled run could start.`,
    );
  }
  return values;
}

/** The values of the flow's default preset (they prefill new schedules), if it has one. */
export const defaultPresetValues = (definition: FlowDefinition): Record<string, string> | undefined => definition.presets.find((p) => p.default)?.values;

/** The cron expression (5 fields, in the schedule's time zone) of a day, week or month recurrence; null for intervals. */
export function cronOf(r: Recurrence): string | null {
  if (isInterval(r)) return null;
  const [h, m] = r.at.split(':').map(Number) as [number, number];
  if (r.every === 'day') return `${m} ${h} * * *`;
  if (r.every === 'week') return `${m} ${h} * * ${r.weekday}`;
  return `${m} ${h} ${r.dayOfMonth} * *`;
}

/**
 * The EventBridge Scheduler expression (evaluated in `ScheduleExpressionTimezone`): `rate(...)` for
 * intervals (with `StartDate` = the next run, which keeps the anchor), `cron(...)` otherwise.
 */
export function awsScheduleExpression(r: Recurrence): string {
  if (isInterval(r)) {
    const unit = r.every === 'minutes' ? 'minute' : 'hour';
    return `rate(${r.interval} ${unit}${r.interval === 1 ? '' : 's'})`;
  }
  const [h, m] = r.at.split(':').map(Number) as [number, number];
  // Fields: minutes hours day-of-month month day-of-week year; one of the two days must be `?`.
  if (r.every === 'day') return `cron(${m} ${h} * * ? *)`;
  if (r.every === 'week') return `cron(${m} ${h} ? * ${WEEKDAY_NAMES[r.weekday]} *)`;
  return `cron(${m} ${h} ${r.dayOfMonth} * ? *)`;
}

const MINUTE = 60_000;

/** Where an interval schedule counts from: its creation, to the whole minute. */
export const intervalAnchor = (createdAt: string): number => Math.floor(Date.parse(createdAt) / MINUTE) * MINUTE;

const wallClock = new Map<string, Intl.DateTimeFormat>();
/** "HH:MM" of an instant in a time zone. */
function localTime(d: Date, timeZone: string): string {
  let f = wallClock.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    wallClock.set(timeZone, f);
  }
  return f.format(d);
}

/** The first time the schedule fires strictly after `after` (whether or not it is enabled). */
export function nextRun(schedule: Pick<ScheduleRecord, 'recurrence' | 'timeZone' | 'createdAt'>, after: Date): Date {
  const r = schedule.recurrence;
  if (isInterval(r)) {
    const step = r.interval * (r.every === 'minutes' ? MINUTE : 60 * MINUTE);
    const anchor = intervalAnchor(schedule.createdAt);
    const k = Math.max(1, Math.floor((after.getTime() - anchor) / step) + 1);
    return new Date(anchor + k * step);
  }
  return nextCalendarRun(r, schedule.timeZone, after);
}

function nextCalendarRun(r: CalendarRecurrence, timeZone: string, after: Date): Date {
  const cron = new Cron(cronOf(r)!, { timezone: timeZone, mode: '5-part' });
  let from = after;
  // croner moves a time inside a DST gap to the first valid time after it; EventBridge Scheduler
  // skips it, and so do we: only runs at the wall-clock time asked for count.
  for (let i = 0; i < 24; i++) {
    const next = cron.nextRun(from);
    if (!next) break;
    if (localTime(next, timeZone) === r.at) return next;
    from = next;
  }
  throw new Error(`no next run for ${JSON.stringify(r)} in ${timeZone} after ${after.toISOString()}`);
}
