import { nextRun } from '../../domain/flows/schedules/schedules.js';
import type { ScheduleRecord } from '../../domain/flows/records.js';
import type { FlowScheduler } from '../../ports/flow-scheduler.js';
import type { Clock } from '../../ports/clock.js';
import { AsyncResource } from 'node:async_hooks';
import type { Logger } from '../../ports/logger.js';
import { defaultLogger } from '../common/powertools-logger.js';

/** Starts the run of a schedule that is due (FlowScheduleService.fire). */
export type ScheduleFirer = (schedule: ScheduleRecord) => Promise<unknown>;

interface Entry {
  schedule: ScheduleRecord;
  /** Null while disabled. */
  next: Date | null;
}

/** The timer re-reads the clock at least this often (a clock that jumps, a laptop that slept). */
const MAX_TIMER_MS = 30_000;

/**
 * The embedded platform's scheduler: the schedules in memory (loaded at start, then kept by
 * `upsert`/`remove`), each with its next run computed with croner against the platform clock, and
 * a timer that fires what is due. `tick()` fires everything due at `clock.now()`, so tests drive
 * it with an injected clock instead of waiting. Ticks never overlap, so a schedule fires once per
 * due time whoever ticks. Runs missed while the platform was down, or while the clock jumped past
 * several due times, collapse into one run at the next tick (as a scheduler that was asleep).
 */
export class CronerScheduler implements FlowScheduler {
  private readonly entries = new Map<string, Entry>();
  private firer?: ScheduleFirer;
  private timer?: NodeJS.Timeout;
  private ticking: Promise<number> = Promise.resolve(0);
  private stopped = false;
  /**
   * The async context the scheduler was made in (no request's): its timer runs there, so lines a
   * schedule logs never carry the id of whichever request last changed a schedule.
   */
  private readonly home = new AsyncResource('CronerScheduler');

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger = defaultLogger,
  ) {}

  /** Where due schedules go; the timer starts once bound. */
  bind(firer: ScheduleFirer): void {
    this.firer = firer;
    this.arm();
  }

  /** Takes the stored schedules (at start). */
  load(schedules: readonly ScheduleRecord[]): void {
    for (const s of schedules) this.set(s);
    this.arm();
  }

  async upsert(schedule: ScheduleRecord): Promise<void> {
    this.set(schedule);
    this.arm();
  }

  async remove(schedule: Pick<ScheduleRecord, 'blueprintUid' | 'id'>): Promise<void> {
    this.entries.delete(key(schedule));
    this.arm();
  }

  /** When the schedule fires next here (null: unknown or disabled). */
  nextRunOf(schedule: Pick<ScheduleRecord, 'blueprintUid' | 'id'>): Date | null {
    return this.entries.get(key(schedule))?.next ?? null;
  }

  /** Fires every schedule due at `clock.now()`; resolves, with how many fired, once their runs have started. */
  tick(): Promise<number> {
    const run = this.ticking.catch(() => 0).then(() => this.fireDue());
    this.ticking = run;
    return run;
  }

  /** Stops the timer and waits for a tick still going. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking.catch(() => 0);
  }

  private set(schedule: ScheduleRecord): void {
    this.entries.set(key(schedule), { schedule, next: schedule.enabled ? nextRun(schedule, this.clock.now()) : null });
  }

  private async fireDue(): Promise<number> {
    if (!this.firer || this.stopped) return 0;
    const now = this.clock.now();
    const due = [...this.entries.values()].filter((e) => e.next !== null && e.next.getTime() <= now.getTime());
    for (const entry of due) entry.next = nextRun(entry.schedule, now);
    const firer = this.firer;
    await Promise.all(
      due.map((entry) =>
        firer(entry.schedule).catch((e: Error) =>
          this.logger.error(`schedule ${entry.schedule.id} could not start a run: ${e.message}`, { scheduleId: entry.schedule.id }),
        ),
      ),
    );
    return due.length;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || !this.firer) return;
    let earliest = Infinity;
    for (const e of this.entries.values()) if (e.next && e.next.getTime() < earliest) earliest = e.next.getTime();
    if (earliest === Infinity) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, earliest - this.clock.now().getTime()));
    this.timer = this.home.runInAsyncScope(() =>
      setTimeout(() => {
        this.timer = undefined;
        void this.tick().finally(() => this.arm());
      }, delay),
    );
    this.timer.unref();
  }
}

const key = (s: Pick<ScheduleRecord, 'blueprintUid' | 'id'>) => `${s.blueprintUid}/${s.id}`;
