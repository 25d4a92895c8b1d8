/**
 * Schedules through HTTP against the embedded platform with an injected clock: no real waiting.
 * The test moves the clock and calls the croner scheduler's `tick()` (reached through the platform
 * object), then counts the schedule's runs with GET /flows/runs. Covers who may add, change and
 * delete schedules, validation, values prefilled from the default preset, every recurrence kind
 * firing at the right instants, a daily schedule across the Europe/Amsterdam DST changes, disabled
 * schedules, the runs' startedFrom and starter, and removal with the flow and with the owner.
 *
 * The clock only moves forward, so the tests run in order and each starts from where the previous
 * one left the clock. Console sessions last a week of clock time: each test signs in afresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CronerScheduler } from '../../functions/adapters/local/croner-scheduler.js';
import { consoleSession, createFlow, enableFlows, waitForRun } from '../support/flows.js';
import { TestPlatform } from '../support/platform.js';
import { systemClock } from '../../functions/adapters/common/node-crypto.js';

class ManualClock {
  // Only `now` is manual; waits are real.
  sleep = systemClock.sleep;
  after = systemClock.after;
  private t: number;
  constructor(iso: string) {
    this.t = Date.parse(iso);
  }
  now = (): Date => new Date(this.t);
  set(iso: string): void {
    const t = Date.parse(iso);
    if (t < this.t) throw new Error(`the test clock only moves forward (${iso} is before ${new Date(this.t).toISOString()})`);
    this.t = t;
  }
}

// Friday 27 March 2026, 13:00 in Amsterdam; the clocks spring forward on Sunday the 29th.
const clock = new ManualClock('2026-03-27T12:00:00.000Z');
const ORG = 'lab';
const FLOW = `/flows/blueprints/${ORG}/nightly`;

let p: TestPlatform;
let alice: string;
let mia: string;

beforeAll(async () => {
  p = await TestPlatform.start({ clock });
  alice = await p.createUser('alice');
  mia = await p.createUser('mia');
  await p.createUser('bob');
  await p.createUser('bea');
  await p.createUser('carol');
  await enableFlows(p);
  await p.createOrg(ORG, alice);
  await p.addMember(ORG, 'mia', 'member', alice);
  const role = await p.request('POST', `/accounts/${ORG}/roles`, { token: alice, body: { name: 'designer', permissions: ['manageFlowBlueprints'] } });
  expect(role.status).toBe(201);
  await p.addMember(ORG, 'bea', 'designer', alice);
  await p.addMember(ORG, 'carol', 'owner', alice);
  await createFlow(p, ORG, await consoleSession(p, 'alice'), flow('nightly'));
});
afterAll(async () => p?.stop());

/** A flow with a required variable (allowed options), an optional one and a default preset. */
function flow(id: string) {
  return {
    id,
    name: `Flow ${id}`,
    accessLevel: 'Private',
    variables: [
      { name: 'target', required: true, allowedOptions: ['test', 'prod'] },
      { name: 'note', required: false },
    ],
    presets: [
      { name: 'Acceptance', values: { target: 'test' }, default: false },
      { name: 'Production', values: { target: 'prod', note: 'nightly' }, default: true },
    ],
    outputVariables: [{ name: 'said' }],
    tasks: [{ id: 'say', label: 'Say', type: 'setVariables', settings: { values: { said: '?target ?note by ?system_triggererAccountName' } } }],
    connections: [],
  };
}

const scheduler = () => p.platform.services.platform.scheduler as CronerScheduler;

/** Moves the clock and fires what is due; resolves once the runs have started. */
async function at(iso: string): Promise<void> {
  clock.set(iso);
  await scheduler().tick();
}

const session = (account = 'alice') => consoleSession(p, account);

async function create(body: Record<string, unknown>, headers?: Record<string, string>, path = FLOW): Promise<any> {
  const res = await p.request('POST', `${path}/schedules`, { headers: headers ?? (await session()), body });
  if (res.status !== 201) throw new Error(`schedule: ${res.status} ${res.text}`);
  return res.body;
}

/** The schedule's runs, oldest first. */
async function runsOf(scheduleId: string): Promise<any[]> {
  const res = await p.request('GET', `/flows/runs?startedFromType=schedule&scheduleId=${scheduleId}&sortDirection=asc`, { token: alice });
  expect(res.status).toBe(200);
  return res.body;
}
const createdAt = async (scheduleId: string) => (await runsOf(scheduleId)).map((r) => r.createdAt);

async function remove(id: string, path = FLOW): Promise<void> {
  const res = await p.request('DELETE', `${path}/schedules/${id}`, { headers: await session() });
  expect(res.status).toBe(204);
}

describe('adding schedules', () => {
  it('creates a schedule from a console session, its values prefilled from the default preset', async () => {
    const res = await p.request('POST', `${FLOW}/schedules`, {
      headers: await session(),
      body: { label: 'Nightly load', recurrence: { every: 'day', at: '02:30' }, timeZone: 'Europe/Amsterdam' },
    });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(res.headers.get('location')).toBe(`${p.url}${FLOW}/schedules/${s.id}`);
    expect(s).toMatchObject({
      label: 'Nightly load',
      recurrence: { every: 'day', at: '02:30' },
      timeZone: 'Europe/Amsterdam',
      values: { target: 'prod', note: 'nightly' },
      enabled: true,
      owner: 'alice',
      // Saturday 28 March, 02:30 CET.
      nextRunAt: '2026-03-28T01:30:00.000Z',
      createdAt: '2026-03-27T12:00:00.000Z',
      updatedAt: '2026-03-27T12:00:00.000Z',
    });
    expect(Object.keys(s).sort()).toEqual(['createdAt', 'enabled', 'id', 'label', 'nextRunAt', 'owner', 'recurrence', 'runsUrl', 'timeZone', 'updatedAt', 'url', 'values'].sort());

    // Anyone who sees the flow sees its schedules, tokens included.
    const read = await p.request('GET', `${FLOW}/schedules/${s.id}`, { token: mia });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(s);
    const list = await p.request('GET', `${FLOW}/schedules`, { token: alice });
    expect(list.body.map((x: { id: string }) => x.id)).toContain(s.id);
    await remove(s.id);
  });

  it('takes given values instead of the preset, UTC when no time zone is given, and starts disabled when asked', async () => {
    const s = await create({ label: 'Acceptance', recurrence: { every: 'hours', interval: 6 }, values: { target: 'test' }, enabled: false });
    expect(s).toMatchObject({ values: { target: 'test' }, timeZone: 'UTC', enabled: false, nextRunAt: null });
    await remove(s.id);
  });

  it('refuses API tokens (403), members without Manage flow blueprints (403), outsiders (404) and anonymous callers (401)', async () => {
    const body = { label: 'x', recurrence: { every: 'day', at: '02:30' } };
    const token = await p.request('POST', `${FLOW}/schedules`, { token: alice, body });
    expect(token.status).toBe(403);
    expect(token.body.message).toMatch(/^Forbidden\. Flows are edited in the console: sign in .* to add schedules/);
    const member = await p.request('POST', `${FLOW}/schedules`, { headers: await session('mia'), body });
    expect(member.status).toBe(403);
    expect(member.body.message).toMatch(/^Forbidden\. Account "mia" may not add schedules of "lab"/);
    const outsider = await p.request('POST', `${FLOW}/schedules`, { headers: await session('bob'), body });
    expect(outsider.status).toBe(404);
    const anonymous = await p.request('POST', `${FLOW}/schedules`, { body });
    expect(anonymous.status).toBe(401);
    expect((await p.request('GET', `${FLOW}/schedules`, { token: alice })).body).toEqual([]);
  });

  it('answers 400 saying what to fix', async () => {
    const headers = await session();
    const post = (body: unknown) => p.request('POST', `${FLOW}/schedules`, { headers, body });
    const day = { every: 'day', at: '02:30' };
    const cases: [unknown, RegExp][] = [
      [{ label: 'x'.repeat(81), recurrence: day }, /label: a schedule label has at most 80 characters; this one has 81/],
      [{ recurrence: day }, /label: give the schedule a label/],
      [{ label: 'x', recurrence: day, timeZone: 'Europe/Atlantis' }, /timeZone: give an IANA time zone name .*"Europe\/Atlantis" is not one/],
      [{ label: 'x', recurrence: day, timeZone: '+02:00' }, /timeZone: give an IANA time zone name/],
      [{ label: 'x' }, /recurrence: say when the schedule fires/],
      [{ label: 'x', recurrence: { every: 'fortnight' } }, /recurrence.every: use "minutes", "hours", "day", "week" or "month"/],
      [{ label: 'x', recurrence: { every: 'minutes', interval: 90 } }, /recurrence.interval: every N minutes takes a whole number N from 1 to 59/],
      [{ label: 'x', recurrence: { every: 'day', at: '25:00' } }, /recurrence.at: the time of day as "HH:MM"/],
      [{ label: 'x', recurrence: { every: 'week', at: '09:00', weekday: 7 } }, /recurrence.weekday: a whole number from 0 \(Sunday\) to 6 \(Saturday\)/],
      [{ label: 'x', recurrence: { every: 'month', at: '09:00', dayOfMonth: 32 } }, /recurrence.dayOfMonth: a whole number from 1 to 31/],
      [{ label: 'x', recurrence: day, values: { target: 'staging' } }, /Variable "target": "staging" is not one of its allowed options "test", "prod"/],
      [{ label: 'x', recurrence: day, values: { nope: '1', target: 'prod' } }, /no variable "nope"/],
      [{ label: 'x', recurrence: day, values: { note: 'no target' } }, /values: the required variable "target" needs a value/],
      [{ label: 'x', recurrence: day, enabled: 'yes' }, /enabled: true or false/],
      [{ label: 'x', recurrence: day, cron: '* * * * *' }, /Unrecognized key/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await p.request('GET', `${FLOW}/schedules`, { token: alice })).body).toEqual([]);
  });
});

describe('firing', () => {
  it('fires a daily schedule at its local time across the spring-forward day, and skips a time that does not exist', async () => {
    const nine = await create({ label: 'Nine', recurrence: { every: 'day', at: '09:00' }, timeZone: 'Europe/Amsterdam' });
    const early = await create({ label: 'Half past two', recurrence: { every: 'day', at: '02:30' }, timeZone: 'Europe/Amsterdam' });

    await at('2026-03-28T01:29:59.000Z');
    expect(await runsOf(early.id)).toHaveLength(0);
    await at('2026-03-28T01:30:00.000Z'); // 02:30 CET
    await at('2026-03-28T07:59:00.000Z');
    expect(await runsOf(nine.id)).toHaveLength(0);
    await at('2026-03-28T08:00:00.000Z'); // 09:00 CET
    // Sunday 29 March: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day.
    await at('2026-03-29T01:00:00.000Z');
    await at('2026-03-29T06:59:00.000Z');
    expect(await runsOf(nine.id)).toHaveLength(1);
    await at('2026-03-29T07:00:00.000Z'); // 09:00 CEST
    await at('2026-03-30T00:30:00.000Z'); // 02:30 CEST
    expect(await createdAt(nine.id)).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z']);
    expect(await createdAt(early.id)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    const read = await p.request('GET', `${FLOW}/schedules/${nine.id}`, { token: alice });
    expect(read.body.nextRunAt).toBe('2026-03-30T07:00:00.000Z');
    await remove(nine.id);
    await remove(early.id);
  });

  it('fires a weekly schedule on its weekday, and a monthly one on its day (skipping months without it)', async () => {
    // Mondays 09:30 in Amsterdam; the 31st at 06:00 UTC.
    const weekly = await create({ label: 'Mondays', recurrence: { every: 'week', at: '09:30', weekday: 1 }, timeZone: 'Europe/Amsterdam' });
    const monthly = await create({ label: 'Month end', recurrence: { every: 'month', at: '06:00', dayOfMonth: 31 }, timeZone: 'UTC' });
    expect(monthly.nextRunAt).toBe('2026-03-31T06:00:00.000Z');
    await at('2026-03-30T07:30:00.000Z'); // Monday 30 March, 09:30 CEST
    await at('2026-03-31T06:00:00.000Z');
    await at('2026-04-05T12:00:00.000Z'); // Sunday: nothing
    await at('2026-04-06T07:30:00.000Z');
    expect(await createdAt(weekly.id)).toEqual(['2026-03-30T07:30:00.000Z', '2026-04-06T07:30:00.000Z']);
    await remove(weekly.id);
    await at('2026-04-30T06:00:00.000Z'); // April has no 31st
    await at('2026-05-31T06:00:00.000Z');
    expect(await createdAt(monthly.id)).toEqual(['2026-03-31T06:00:00.000Z', '2026-05-31T06:00:00.000Z']);
    await remove(monthly.id);
  });

  it('fires every N minutes and every N hours counting from the creation', async () => {
    clock.set('2026-06-01T10:07:31.000Z');
    const quarter = await create({ label: 'Quarterly', recurrence: { every: 'minutes', interval: 15 } });
    const twoHours = await create({ label: 'Two-hourly', recurrence: { every: 'hours', interval: 2 }, timeZone: 'Europe/Amsterdam' });
    expect(quarter.nextRunAt).toBe('2026-06-01T10:22:00.000Z');
    expect(twoHours.nextRunAt).toBe('2026-06-01T12:07:00.000Z');
    await at('2026-06-01T10:21:59.000Z');
    expect(await runsOf(quarter.id)).toHaveLength(0);
    await at('2026-06-01T10:22:00.000Z');
    await at('2026-06-01T10:37:00.000Z');
    await at('2026-06-01T10:52:00.000Z');
    await at('2026-06-01T12:07:00.000Z');
    await at('2026-06-01T14:07:00.000Z');
    expect(await createdAt(quarter.id)).toEqual([
      '2026-06-01T10:22:00.000Z',
      '2026-06-01T10:37:00.000Z',
      '2026-06-01T10:52:00.000Z',
      // Missed quarter hours (the clock jumped) collapse into one run.
      '2026-06-01T12:07:00.000Z',
      '2026-06-01T14:07:00.000Z',
    ]);
    expect(await createdAt(twoHours.id)).toEqual(['2026-06-01T12:07:00.000Z', '2026-06-01T14:07:00.000Z']);
    await remove(quarter.id);
    await remove(twoHours.id);
    await at('2026-06-01T16:07:00.000Z');
    expect(await runsOf(quarter.id)).toHaveLength(5);
  });

  it('runs act as the owner, with startedFrom schedule and the schedule values', async () => {
    const s = await create({ label: 'Values', recurrence: { every: 'minutes', interval: 5 }, values: { target: 'test', note: 'from the schedule' } });
    await at(new Date(Date.parse(s.nextRunAt)).toISOString());
    const [run] = await runsOf(s.id);
    expect(run).toMatchObject({
      startedFrom: { type: 'schedule', scheduleId: s.id },
      startedBy: 'alice',
      account: ORG,
      flowId: 'nightly',
      variables: { target: 'test', note: 'from the schedule', system_triggererAccountName: 'alice' },
    });
    const finished = await waitForRun(p, run.id, alice);
    expect(finished.status).toBe('finished');
    const tasks = await p.request('GET', `/flows/taskInstances?runId=${run.id}`, { token: alice });
    expect(tasks.body[0].output.variables).toEqual({ said: 'test from the schedule by alice' });
    // The listing filters by schedule: other runs are not counted.
    const all = await p.request('GET', `/flows/runs?startedFromType=schedule`, { token: alice });
    expect(all.body.length).toBeGreaterThan(1);
    await remove(s.id);
  });
});

describe('changing schedules', () => {
  it('a disabled schedule keeps its settings and never fires; enabled again, it fires', async () => {
    const s = await create({ label: 'Pausable', recurrence: { every: 'minutes', interval: 10 }, timeZone: 'Europe/Amsterdam', values: { target: 'test' } });
    const off = await p.request('PATCH', `${FLOW}/schedules/${s.id}`, { headers: await session(), body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ ...s, enabled: false, nextRunAt: null, updatedAt: clock.now().toISOString() });
    const start = clock.now().getTime();
    for (let i = 1; i <= 6; i++) await at(new Date(start + i * 10 * 60_000).toISOString());
    expect(await runsOf(s.id)).toHaveLength(0);
    const read = await p.request('GET', `${FLOW}/schedules/${s.id}`, { token: alice });
    expect(read.body).toMatchObject({ label: 'Pausable', recurrence: { every: 'minutes', interval: 10 }, timeZone: 'Europe/Amsterdam', values: { target: 'test' }, enabled: false });

    const on = await p.request('PATCH', `${FLOW}/schedules/${s.id}`, { headers: await session(), body: { enabled: true, label: 'Resumed' } });
    expect(on.body).toMatchObject({ label: 'Resumed', enabled: true });
    await at(on.body.nextRunAt);
    expect(await runsOf(s.id)).toHaveLength(1);
    await remove(s.id);
  });

  it('changes the recurrence, time zone and values; checks them as on create', async () => {
    const s = await create({ label: 'Changing', recurrence: { every: 'day', at: '05:00' }, timeZone: 'UTC' });
    const headers = await session();
    const patch = (body: unknown) => p.request('PATCH', `${FLOW}/schedules/${s.id}`, { headers, body });
    const changed = await patch({ recurrence: { every: 'day', at: '06:15' }, timeZone: 'America/New_York', values: { target: 'test' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ recurrence: { every: 'day', at: '06:15' }, timeZone: 'America/New_York', values: { target: 'test' }, label: 'Changing' });
    expect((await patch({ label: '' })).status).toBe(400);
    expect((await patch({ timeZone: 'Nowhere/Special' })).body.message).toMatch(/timeZone/);
    expect((await patch({ values: { target: 'staging' } })).status).toBe(400);
    // Only the owner changes it (its runs act as them); another manager may delete it.
    const bea = await session('bea');
    const other = await p.request('PATCH', `${FLOW}/schedules/${s.id}`, { headers: bea, body: { values: { target: 'prod' } } });
    expect(other.status).toBe(403);
    expect(other.body.message).toMatch(/^Forbidden\. Schedule ".*" belongs to "alice" and its runs act as them/);
    const token = await p.request('PATCH', `${FLOW}/schedules/${s.id}`, { token: alice, body: { enabled: false } });
    expect(token.status).toBe(403);
    const missing = await p.request('PATCH', `${FLOW}/schedules/nope`, { headers, body: { enabled: false } });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/has no schedule "nope"/);
    const deleted = await p.request('DELETE', `${FLOW}/schedules/${s.id}`, { headers: bea });
    expect(deleted.status).toBe(204);
    expect((await p.request('GET', `${FLOW}/schedules/${s.id}`, { token: alice })).status).toBe(404);
  });
});

describe('removal', () => {
  it('deleting the flow removes its schedules: they never fire again', async () => {
    const headers = await session();
    const doomed = await createFlow(p, ORG, headers, flow('doomed'));
    const path = `/flows/blueprints/${ORG}/doomed`;
    const s = await create({ label: 'Doomed', recurrence: { every: 'minutes', interval: 1 } }, headers, path);
    expect(scheduler().nextRunOf({ blueprintUid: doomed.blueprintId, id: s.id })?.toISOString()).toBe(s.nextRunAt);
    await at(s.nextRunAt);
    expect(await runsOf(s.id)).toHaveLength(1);
    expect((await p.request('DELETE', path, { headers })).status).toBe(204);
    expect(scheduler().nextRunOf({ blueprintUid: doomed.blueprintId, id: s.id })).toBeNull();
    await at(new Date(Date.parse(s.nextRunAt) + 5 * 60_000).toISOString());
    expect(await runsOf(s.id)).toHaveLength(0); // the flow's runs went with it, and no new one started
    expect(await p.platform.services.platform.flows.listAllSchedules()).not.toContainEqual(expect.objectContaining({ id: s.id }));
  });

  it("deleting the owner removes their schedules (and no run acts as them any more); others' stay", async () => {
    const carols = await create({ label: "Carol's", recurrence: { every: 'minutes', interval: 1 } }, await session('carol'));
    const alices = await create({ label: "Alice's", recurrence: { every: 'minutes', interval: 1 } });
    expect(carols.owner).toBe('carol');
    await at(new Date(clock.now().getTime() + 60_000).toISOString());
    expect(await runsOf(carols.id)).toHaveLength(1);
    expect((await runsOf(carols.id))[0].startedBy).toBe('carol');

    expect((await p.request('DELETE', '/accounts/carol', { token: p.adminToken })).status).toBe(204);
    const left = (await p.request('GET', `${FLOW}/schedules`, { token: alice })).body.map((x: { id: string }) => x.id);
    expect(left).toEqual([alices.id]);
    await at(new Date(clock.now().getTime() + 5 * 60_000).toISOString());
    expect(await runsOf(carols.id)).toHaveLength(1);
    expect(await runsOf(alices.id)).toHaveLength(2);
    await remove(alices.id);
  });
});

describe('daylight saving time ends', () => {
  it('a daily 02:30 in Amsterdam fires once on the fall-back day (02:30 happens twice), at the first one', async () => {
    clock.set('2026-10-24T12:00:00.000Z');
    const s = await create({ label: 'Half past two', recurrence: { every: 'day', at: '02:30' }, timeZone: 'Europe/Amsterdam' });
    expect(s.nextRunAt).toBe('2026-10-25T00:30:00.000Z');
    await at('2026-10-25T00:30:00.000Z'); // 02:30 CEST
    await at('2026-10-25T01:30:00.000Z'); // 02:30 CET, again
    await at('2026-10-26T01:29:00.000Z');
    await at('2026-10-26T01:30:00.000Z'); // 02:30 CET
    expect(await createdAt(s.id)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    await remove(s.id);
  });
});
