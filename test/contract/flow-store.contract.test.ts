/**
 * The FlowStore contract against DynamoDbFlowStore on dynalite (in memory), with the table
 * created exactly as the embedded platform creates it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDynamo, startDynalite } from '../support/dynalite.js';
import { DynamoDbFlowStore } from '../../functions/adapters/aws/dynamodb-flow-store.js';
import { cachedFlowStore } from '../../functions/adapters/local/cached-flow-store.js';
import { documentClient } from '../../functions/composition/aws.js';
import { ensureTable } from '../../functions/composition/local.js';
import { ConflictError, NotFoundError } from '../../functions/domain/shared/errors.js';
import { FLOW_FORMAT_VERSION, type FlowDefinition } from '../../functions/domain/flows/blueprints/model.js';
import {
  type FlowRecord,
  type FlowVersionRecord,
  type RunRecord,
  type TaskInstanceRecord,
  taskInstanceId,
} from '../../functions/domain/flows/records.js';
import type { RunStatus } from '../../functions/domain/flows/runs/run-status.js';
import type { FlowStore } from '../../functions/ports/flow-store.js';

const TABLE = 'platform-flow-store-test';

let dynamo: LocalDynamo;
let client: DynamoDBClient;
let store: FlowStore;

beforeAll(async () => {
  dynamo = await startDynalite();
  client = dynamo.client;
  await ensureTable(client, TABLE);
  store = new DynamoDbFlowStore(documentClient(client), TABLE);
});

afterAll(async () => {
  await dynamo?.stop();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}${Math.random().toString(36).slice(2, 8)}`;

function flow(overrides: Partial<FlowRecord> = {}): FlowRecord {
  return {
    uid: unique('flow'),
    ownerUid: unique('owner'),
    flowId: 'Nightly-Load',
    name: 'Nightly load',
    accessLevel: 'Private',
    latestVersion: 1,
    createdAt: '2024-05-01T10:00:00.000Z',
    updatedAt: '2024-05-01T10:00:00.000Z',
    createdByUid: 'creator',
    ...overrides,
  };
}

function definition(id: string): FlowDefinition {
  return {
    formatVersion: FLOW_FORMAT_VERSION,
    id,
    name: 'Nightly load',
    description: '',
    accessLevel: 'Private',
    tasks: [{ id: 'query', label: 'Query', type: 'sparqlQuery', settings: { query: 'SELECT * {}' } }],
    connections: [],
    variables: [{ name: 'graph', description: '', required: false, allowedOptions: [] }],
    outputVariables: [],
    maskedValues: [],
    presets: [],
  };
}

function version(blueprintUid: string, n: number): FlowVersionRecord {
  return {
    blueprintUid,
    version: n,
    definition: definition('Nightly-Load'),
    createdAt: `2024-05-01T10:00:0${n}.000Z`,
    createdByUid: 'creator',
  };
}

function run(blueprintUid: string, createdAt: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: unique('run'),
    blueprintUid,
    flowId: 'Nightly-Load',
    ownerUid: 'owner',
    version: 1,
    status: 'pending',
    startedFrom: { type: 'manual' },
    startedByUid: 'starter',
    variables: { graph: 'https://example.org/g' },
    createdAt,
    ...overrides,
  };
}

function task(runId: string, taskId: string, overrides: Partial<TaskInstanceRecord> = {}): TaskInstanceRecord {
  return {
    id: taskInstanceId(runId, taskId),
    runId,
    taskId,
    label: taskId,
    type: 'sparqlQuery',
    status: 'pending',
    log: [],
    artifacts: [],
    ...overrides,
  };
}

/** Every item of a listing, batch by batch, following cursors. */
async function listAll<T>(list: (after: string | undefined) => Promise<{ items: { item: T; cursor: string }[]; more: boolean }>): Promise<{ items: T[]; batches: number }> {
  const items: T[] = [];
  let after: string | undefined;
  let batches = 0;
  for (;;) {
    const batch = await list(after);
    batches++;
    items.push(...batch.items.map((p) => p.item));
    if (!batch.more || batch.items.length === 0) break;
    after = batch.items[batch.items.length - 1]!.cursor;
    if (batches > 50) throw new Error('listing does not end');
  }
  return { items, batches };
}

/**
 * The contract holds for the plain store and for the embedded platform's read cache in front of
 * it (which must be exact: every read sees every earlier write). Each variant gets its own table.
 */
const VARIANTS: [string, (inner: FlowStore) => FlowStore][] = [
  ['DynamoDbFlowStore', (inner) => inner],
  ['DynamoDbFlowStore behind the embedded read cache', cachedFlowStore],
];

describe.each(VARIANTS)('%s', (_name, wrap) => {
  beforeAll(async () => {
    const table = unique(`${TABLE}-`);
    await ensureTable(client, table);
    store = wrap(new DynamoDbFlowStore(documentClient(client), table));
  });

  describe('switches', () => {
    it('are null until set, then read back as written', async () => {
      expect(await store.getSwitches()).toBeNull();
      await store.putSwitches({ flowsEnabled: true, sparqlUpdateTaskEnabled: false });
      expect(await store.getSwitches()).toEqual({ flowsEnabled: true, sparqlUpdateTaskEnabled: false });
      await store.putSwitches({ flowsEnabled: false, sparqlUpdateTaskEnabled: true });
      expect(await store.getSwitches()).toEqual({ flowsEnabled: false, sparqlUpdateTaskEnabled: true });
    });
  });

  describe('flows', () => {
    it('creates a flow and finds it by owner and flow ID (any case) and by uid', async () => {
      const f = flow();
      await store.createFlow(f);
      expect(await store.getFlow(f.ownerUid, 'Nightly-Load')).toEqual(f);
      expect(await store.getFlow(f.ownerUid, 'nightly-LOAD')).toEqual(f);
      expect(await store.getFlowByUid(f.uid)).toEqual(f);
      expect(await store.getFlow(f.ownerUid, 'other')).toBeNull();
      expect(await store.getFlow('someone-else', 'Nightly-Load')).toBeNull();
      expect(await store.getFlowByUid('no-such-uid')).toBeNull();
    });

    it('refuses a second flow with the same flow ID for one owner, case-insensitively', async () => {
      const f = flow();
      await store.createFlow(f);
      const twin = flow({ ownerUid: f.ownerUid, flowId: 'NIGHTLY-load' });
      await expect(store.createFlow(twin)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getFlowByUid(twin.uid)).toBeNull();
      // Another owner may use the same flow ID.
      await store.createFlow(flow({ flowId: f.flowId }));
    });

    it('replaces a flow only when its stored latestVersion is the expected one', async () => {
      const f = flow();
      await store.createFlow(f);
      const saved = { ...f, latestVersion: 2, name: 'Renamed', updatedAt: '2024-05-02T00:00:00.000Z' };
      await store.replaceFlow(saved, 1);
      expect(await store.getFlow(f.ownerUid, f.flowId)).toEqual(saved);
      expect(await store.getFlowByUid(f.uid)).toEqual(saved);

      const stale = { ...f, latestVersion: 2, name: 'Stale' };
      await expect(store.replaceFlow(stale, 1)).rejects.toThrow(
        new ConflictError('The flow was saved meanwhile; reload it and save again.'),
      );
      expect((await store.getFlow(f.ownerUid, f.flowId))?.name).toBe('Renamed');

      // A change of case of the flow ID keeps the same record.
      const recased = { ...saved, flowId: 'NIGHTLY-LOAD', latestVersion: 3 };
      await store.replaceFlow(recased, 2);
      expect(await store.getFlow(f.ownerUid, 'nightly-load')).toEqual(recased);
    });

    it('refuses to replace a flow that does not exist', async () => {
      const f = flow();
      await expect(store.replaceFlow(f, 1)).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getFlow(f.ownerUid, f.flowId)).toBeNull();
    });

    it('deletes a flow', async () => {
      const f = flow();
      await store.createFlow(f);
      await store.deleteFlow(f);
      expect(await store.getFlow(f.ownerUid, f.flowId)).toBeNull();
      expect(await store.getFlowByUid(f.uid)).toBeNull();
      // The flow ID is free again.
      await store.createFlow({ ...f, uid: unique('flow') });
    });

    it("lists an owner's flows by flow ID, in batches, and nothing else of the account", async () => {
      const ownerUid = unique('owner');
      const ids = ['delta', 'Alpha', 'charlie', 'Bravo', 'echo'];
      for (const flowId of ids) await store.createFlow(flow({ ownerUid, flowId }));
      await store.createFlow(flow({ flowId: 'alpha-of-someone-else' }));

      const { items, batches } = await listAll((after) => store.listFlows(ownerUid, { batch: 2, after }));
      expect(items.map((f) => f.flowId)).toEqual(['Alpha', 'Bravo', 'charlie', 'delta', 'echo']);
      expect(batches).toBeGreaterThanOrEqual(3);
      expect(items.every((f) => f.ownerUid === ownerUid)).toBe(true);

      const first = await store.listFlows(ownerUid, { batch: 2 });
      expect(first.more).toBe(true);
      expect(first.items).toHaveLength(2);
      const rest = await store.listFlows(ownerUid, { batch: 10, after: first.items[1]!.cursor });
      expect(rest.items.map((p) => p.item.flowId)).toEqual(['charlie', 'delta', 'echo']);
      expect(rest.more).toBe(false);

      expect(await store.listFlows(unique('nobody'), { batch: 10 })).toEqual({ items: [], more: false });
    });
  });

  describe('flow versions', () => {
    it('stores versions, refuses a duplicate and lists newest first', async () => {
      const uid = unique('flow');
      for (const n of [1, 2, 3, 9, 10, 11]) await store.putFlowVersion(version(uid, n));
      await expect(store.putFlowVersion({ ...version(uid, 2), createdByUid: 'other' })).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getFlowVersion(uid, 2)).toEqual(version(uid, 2));
      expect(await store.getFlowVersion(uid, 4)).toBeNull();
      expect((await store.listFlowVersions(uid)).map((v) => v.version)).toEqual([11, 10, 9, 3, 2, 1]);
      expect(await store.listFlowVersions(unique('flow'))).toEqual([]);
    });

    it('keeps restoredFrom and the definition intact', async () => {
      const uid = unique('flow');
      const restored = { ...version(uid, 2), restoredFrom: 1 };
      await store.putFlowVersion(restored);
      expect(await store.getFlowVersion(uid, 2)).toEqual(restored);
    });

    it('sets the executable of an existing version only', async () => {
      const uid = unique('flow');
      await store.putFlowVersion(version(uid, 1));
      await store.setFlowVersionExecutable(uid, 1, 'arn:aws:states:eu-west-1:1:stateMachine:flow-1');
      expect(await store.getFlowVersion(uid, 1)).toEqual({
        ...version(uid, 1),
        executable: 'arn:aws:states:eu-west-1:1:stateMachine:flow-1',
      });
      await store.setFlowVersionExecutable(uid, 1, 'local:flow-1');
      expect((await store.getFlowVersion(uid, 1))?.executable).toBe('local:flow-1');

      await expect(store.setFlowVersionExecutable(uid, 7, 'x')).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.getFlowVersion(uid, 7)).toBeNull();
    });

    it('deletes a version', async () => {
      const uid = unique('flow');
      await store.putFlowVersion(version(uid, 1));
      await store.putFlowVersion(version(uid, 2));
      await store.deleteFlowVersion(uid, 1);
      expect(await store.getFlowVersion(uid, 1)).toBeNull();
      expect((await store.listFlowVersions(uid)).map((v) => v.version)).toEqual([2]);
    });
  });

  describe('masked values', () => {
    it('are put, replaced, read and deleted', async () => {
      const uid = unique('flow');
      expect(await store.getMaskedValues(uid)).toBeNull();
      const record = { blueprintUid: uid, values: { password: 's3cret', apiKey: 'k' }, updatedAt: '2024-05-01T00:00:00.000Z' };
      await store.putMaskedValues(record);
      expect(await store.getMaskedValues(uid)).toEqual(record);
      const replaced = { blueprintUid: uid, values: {}, updatedAt: '2024-05-02T00:00:00.000Z' };
      await store.putMaskedValues(replaced);
      expect(await store.getMaskedValues(uid)).toEqual(replaced);
      await store.deleteMaskedValues(uid);
      expect(await store.getMaskedValues(uid)).toBeNull();
    });
  });

  describe('runs', () => {
    it('creates a run, refuses a duplicate id and reads it back', async () => {
      const r = run(unique('flow'), '2024-05-01T10:00:00.000Z', {
        preset: 'nightly',
        startedFrom: { type: 'schedule', scheduleId: 'sched-1' },
      });
      await store.createRun(r);
      expect(await store.getRun(r.id)).toEqual(r);
      await expect(store.createRun({ ...r, status: 'running' })).rejects.toBeInstanceOf(ConflictError);
      expect((await store.getRun(r.id))?.status).toBe('pending');
      expect(await store.getRun('no-such-run')).toBeNull();
    });

    it('updates a run until it reaches a final status, then refuses', async () => {
      for (const final of ['failed', 'timeout', 'aborted', 'finished'] as RunStatus[]) {
        const r = run(unique('flow'), '2024-05-01T10:00:00.000Z');
        await store.createRun(r);
        const running = { ...r, status: 'running' as const, startedAt: '2024-05-01T10:00:01.000Z', executionRef: 'exec-1' };
        expect(await store.updateRun(running)).toBe(true);
        expect(await store.getRun(r.id)).toEqual(running);
        const waiting = { ...running, status: 'waiting' as const, description: 'halfway' };
        expect(await store.updateRun(waiting)).toBe(true);
        const ended = {
          ...waiting,
          status: final,
          finishedAt: '2024-05-01T10:01:00.000Z',
          ...(final === 'finished' ? {} : { error: { taskId: 'query', message: `it ${final}` } }),
        };
        expect(await store.updateRun(ended)).toBe(true);
        expect(await store.getRun(r.id)).toEqual(ended);

        expect(await store.updateRun({ ...ended, status: 'running' })).toBe(false);
        expect(await store.updateRun({ ...ended, status: 'finished', description: 'late' })).toBe(false);
        expect(await store.getRun(r.id)).toEqual(ended);
      }
    });

    it('patches single fields of a run without erasing what another writer set, and answers the run as stored after', async () => {
      const r = run(unique('flow'), '2024-05-01T10:00:00.000Z', { status: 'waiting' as const });
      await store.createRun(r);
      // Two writers that read the run before either wrote: each sets only its own field.
      const withToken = await store.patchRun(r.id, { uploadTaskToken: 'token-1' });
      expect(withToken?.uploadTaskToken).toBe('token-1');
      expect(withToken?.uploadOutcome).toBeUndefined();
      const withBoth = await store.patchRun(r.id, { uploadOutcome: { graph: 'https://example.org/g' } });
      expect(withBoth).toMatchObject({ uploadTaskToken: 'token-1', uploadOutcome: { graph: 'https://example.org/g' } });
      expect(withBoth?.variables.system_uploadedGraphIRI).toBe('https://example.org/g');
      expect(await store.patchRun(r.id, { executionRef: 'exec-9' })).toMatchObject({ executionRef: 'exec-9', uploadTaskToken: 'token-1' });
      expect(await store.getRun(r.id)).toMatchObject({ executionRef: 'exec-9', uploadTaskToken: 'token-1', uploadOutcome: { graph: 'https://example.org/g' } });
      // A final run and a missing one are not patched.
      expect(await store.updateRun({ ...(await store.getRun(r.id))!, status: 'aborted' })).toBe(true);
      expect(await store.patchRun(r.id, { uploadTaskToken: 'token-2' })).toBeNull();
      expect((await store.getRun(r.id))?.uploadTaskToken).toBe('token-1');
      expect(await store.patchRun('no-such-run', { uploadTaskToken: 'token-3' })).toBeNull();
      expect(await store.getRun('no-such-run')).toBeNull();
    });

    it('does not resurrect a deleted run on update', async () => {
      const r = run(unique('flow'), '2024-05-01T10:00:00.000Z');
      await store.createRun(r);
      await store.deleteRun(r.id);
      expect(await store.updateRun({ ...r, status: 'running' })).toBe(false);
      expect(await store.getRun(r.id)).toBeNull();
    });

    it('lists the runs of one flow and of the whole instance, newest first, in batches', async () => {
      const a = unique('flow');
      const b = unique('flow');
      const runsA = [1, 3, 5, 7, 8].map((s) => run(a, `2030-01-01T00:00:0${s}.000Z`));
      const runsB = [2, 4, 6].map((s) => run(b, `2030-01-01T00:00:0${s}.000Z`));
      // Written out of order: the order comes from createdAt.
      for (const r of [...runsB, ...runsA].reverse()) await store.createRun(r);

      const newestFirst = (rs: RunRecord[]) => [...rs].sort((x, y) => y.createdAt.localeCompare(x.createdAt)).map((r) => r.id);

      const ofA = await listAll((after) => store.listRuns(a, { batch: 2, after }));
      expect(ofA.items.map((r) => r.id)).toEqual(newestFirst(runsA));
      expect(ofA.batches).toBeGreaterThanOrEqual(3);
      expect(ofA.items[0]).toEqual(runsA[4]);

      const ofB = await listAll((after) => store.listRuns(b, { batch: 10, after }));
      expect(ofB.items.map((r) => r.id)).toEqual(newestFirst(runsB));
      expect(ofB.batches).toBe(1);

      // These runs are the newest of the instance (year 2030); other tests' runs come after.
      const first = await store.listRuns(null, { batch: 3 });
      expect(first.more).toBe(true);
      const next = await store.listRuns(null, { batch: 5, after: first.items[2]!.cursor });
      expect([...first.items, ...next.items].map((p) => p.item.id)).toEqual(newestFirst([...runsA, ...runsB]));

      const all = await listAll((after) => store.listRuns(null, { batch: 4, after }));
      const created = all.items.map((r) => r.createdAt);
      expect(created).toEqual([...created].sort().reverse());
      expect(new Set(all.items.map((r) => r.id)).size).toBe(all.items.length);
      // Only runs are listed, never their task instances or secrets.
      expect(all.items.every((r) => typeof r.blueprintUid === 'string' && typeof r.status === 'string')).toBe(true);

      // Updates keep the run in place in both listings.
      expect(await store.updateRun({ ...runsA[0]!, status: 'running' })).toBe(true);
      const again = await listAll((after) => store.listRuns(a, { batch: 10, after }));
      expect(again.items.map((r) => r.id)).toEqual(newestFirst(runsA));
      expect(again.items.at(-1)?.status).toBe('running');

      expect(await store.listRuns(unique('flow'), { batch: 10 })).toEqual({ items: [], more: false });
    });
  });

  describe('task instances', () => {
    it('are put, replaced, read and listed per run', async () => {
      const r = run(unique('flow'), '2024-05-01T10:00:00.000Z');
      await store.createRun(r);
      const other = run(unique('flow'), '2024-05-01T10:00:00.000Z');
      await store.createRun(other);

      expect(await store.listTaskInstances(r.id)).toEqual([]);
      const query = task(r.id, 'query');
      const load = task(r.id, 'load', { type: 'loadFromUrl' });
      await store.putTaskInstance(query);
      await store.putTaskInstance(load);
      await store.putTaskInstance(task(other.id, 'query'));
      await store.putRunSecret(r.id, 'token-value');

      const done: TaskInstanceRecord = {
        ...query,
        status: 'finished',
        startedAt: '2024-05-01T10:00:01.000Z',
        finishedAt: '2024-05-01T10:00:02.000Z',
        log: ['started', 'password ****', ''],
        output: { rows: [{ s: 'https://example.org/s' }], count: 1 },
        artifacts: [
          {
            id: 'art-1',
            fileName: 'result.csv',
            contentType: 'text/csv',
            size: 12,
            blobKey: `runs/${r.id}/art-1`,
            createdAt: '2024-05-01T10:00:02.000Z',
          },
        ],
      };
      await store.putTaskInstance(done);
      expect(await store.getTaskInstance(r.id, 'query')).toEqual(done);
      expect(await store.getTaskInstance(r.id, 'missing')).toBeNull();

      const listed = await store.listTaskInstances(r.id);
      expect(listed.map((t) => t.taskId).sort()).toEqual(['load', 'query']);
      expect(listed.find((t) => t.taskId === 'query')).toEqual(done);
      expect(listed.find((t) => t.taskId === 'load')).toEqual(load);
      // The run itself is untouched by its task instances.
      expect(await store.getRun(r.id)).toEqual(r);
    });
  });

  describe('run secrets', () => {
    it('are put, read and deleted', async () => {
      const r = run(unique('flow'), '2024-05-01T10:00:00.000Z');
      await store.createRun(r);
      expect(await store.getRunSecret(r.id)).toBeNull();
      await store.putRunSecret(r.id, 'tok-1');
      expect(await store.getRunSecret(r.id)).toBe('tok-1');
      await store.putRunSecret(r.id, 'tok-2');
      expect(await store.getRunSecret(r.id)).toBe('tok-2');
      expect(await store.getRun(r.id)).toEqual(r);
      await store.deleteRunSecret(r.id);
      expect(await store.getRunSecret(r.id)).toBeNull();
      expect(await store.getRun(r.id)).toEqual(r);
    });
  });

  describe('deleteRun', () => {
    it('removes the run, its task instances and its secret, and nothing of other runs', async () => {
      const blueprintUid = unique('flow');
      const r = run(blueprintUid, '2024-05-01T10:00:00.000Z');
      const kept = run(blueprintUid, '2024-05-01T10:00:01.000Z');
      await store.createRun(r);
      await store.createRun(kept);
      for (const t of ['a', 'b', 'c']) await store.putTaskInstance(task(r.id, t));
      await store.putTaskInstance(task(kept.id, 'a'));
      await store.putRunSecret(r.id, 'tok');
      await store.putRunSecret(kept.id, 'tok-kept');

      await store.deleteRun(r.id);
      expect(await store.getRun(r.id)).toBeNull();
      expect(await store.listTaskInstances(r.id)).toEqual([]);
      expect(await store.getTaskInstance(r.id, 'a')).toBeNull();
      expect(await store.getRunSecret(r.id)).toBeNull();
      expect((await store.listRuns(blueprintUid, { batch: 10 })).items.map((p) => p.item.id)).toEqual([kept.id]);

      expect(await store.getRun(kept.id)).toEqual(kept);
      expect(await store.listTaskInstances(kept.id)).toHaveLength(1);
      expect(await store.getRunSecret(kept.id)).toBe('tok-kept');

      // Deleting a missing run is a no-op.
      await store.deleteRun('no-such-run');
    });
  });

  describe('active runs (the watchdog)', () => {
    const due = async (before: string) => {
      const ids: string[] = [];
      let after: string | undefined;
      for (let i = 0; i < 100; i++) {
        const batch = await store.listActiveRuns(before, { after, batch: 100 });
        ids.push(...batch.items.map((p) => p.item.runId));
        const last = batch.items[batch.items.length - 1];
        if (!batch.more || !last) break;
        after = last.cursor;
      }
      return ids;
    };

    it('marks a run not yet ended until a final status is written, the run deleted, or the mark dropped; postponing moves its check', async () => {
      const uid = unique('flow');
      const going = run(uid, '2024-05-01T10:00:00.000Z');
      const ending = run(uid, '2024-05-01T10:00:01.000Z');
      const deleted = run(uid, '2024-05-01T10:00:02.000Z');
      const ended = run(uid, '2024-05-01T10:00:03.000Z', { status: 'finished' });
      for (const r of [going, ending, deleted, ended]) await store.createRun(r);
      const now = '2024-05-01T11:00:00.000Z';
      expect(await due(now)).toEqual(expect.arrayContaining([going.id, ending.id, deleted.id]));
      expect(await due(now)).not.toContain(ended.id);
      expect(await due('2024-05-01T09:00:00.000Z')).not.toContain(going.id);

      expect(await store.updateRun({ ...ending, status: 'running' })).toBe(true);
      expect(await due(now)).toContain(ending.id);
      expect(await store.updateRun({ ...ending, status: 'failed', finishedAt: now })).toBe(true);
      await store.deleteRun(deleted.id);
      const left = await due(now);
      expect(left).toContain(going.id);
      expect(left).not.toContain(ending.id);
      expect(left).not.toContain(deleted.id);

      await store.postponeActiveRun(going.id, '2024-05-01T12:00:00.000Z');
      expect(await due(now)).not.toContain(going.id);
      expect(await due('2024-05-01T12:00:01.000Z')).toContain(going.id);
      await store.forgetActiveRun(going.id);
      expect(await due('2024-05-01T12:00:01.000Z')).not.toContain(going.id);
      // Postponing a mark that is gone writes nothing.
      await store.postponeActiveRun(going.id, '2024-05-01T12:00:00.000Z');
      expect(await due('2024-05-01T13:00:00.000Z')).not.toContain(going.id);
    });
  });

  describe('flow removals', () => {
    it('are recorded per owner and flow, listed by owner or all, replaced when written again, and deleted', async () => {
      const owner = unique('owner');
      const a = { blueprintUid: unique('flow'), ownerUid: owner, flowId: 'a', requestedAt: '2024-05-01T10:00:00.000Z' };
      const b = { blueprintUid: unique('flow'), ownerUid: unique('owner'), flowId: 'b', requestedAt: '2024-05-01T10:00:00.000Z' };
      await store.putFlowRemoval(a);
      await store.putFlowRemoval(b);
      expect((await store.listFlowRemovals(owner, { batch: 10 })).items.map((p) => p.item)).toEqual([a]);
      const all = (await store.listFlowRemovals(null, { batch: 1_000 })).items.map((p) => p.item.blueprintUid);
      expect(all).toEqual(expect.arrayContaining([a.blueprintUid, b.blueprintUid]));
      await store.putFlowRemoval({ ...a, lastError: 'AccessDenied' });
      expect((await store.listFlowRemovals(owner, { batch: 10 })).items.map((p) => p.item)).toEqual([{ ...a, lastError: 'AccessDenied' }]);
      await store.deleteFlowRemoval(owner, a.blueprintUid);
      expect((await store.listFlowRemovals(owner, { batch: 10 })).items).toEqual([]);
    });
  });
});
