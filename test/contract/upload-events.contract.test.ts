/**
 * The UploadEvents contract, run against both adapters: in-process delivery to the bound hook
 * listener, and EventBridge. EventBridge has no local stand-in, so a recording fake client keeps
 * the PutEvents entries; they are read back the way the hook dispatcher's rule and handler read
 * them (source, detail type, JSON detail), so "received" means "what the hook service is given".
 */
import { type EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import { EventBridgeUploadEvents, UPLOAD_EVENT_SOURCE, UPLOAD_EVENT_TYPES } from '../../functions/adapters/aws/eventbridge-upload-events.js';
import { InProcessUploadEvents } from '../../functions/adapters/local/in-process-upload-events.js';
import type { AssetStoredEvent, ImportFinishedEvent, ImportStartedEvent, UploadEvents } from '../../functions/ports/upload-events.js';

type Received =
  | { kind: 'assetStored'; event: AssetStoredEvent }
  | { kind: 'importStarted'; event: ImportStartedEvent }
  | { kind: 'importFinished'; event: ImportFinishedEvent };

interface UploadEventsHarness {
  events: UploadEvents;
  /** What the hook service has been handed so far. */
  received(): Received[];
  /** Waits for deliveries the adapter does not await. */
  settle(): Promise<void>;
  /** Asset events reach the hooks through this adapter (true) or through the bucket's own notification (false). */
  carriesAssetEvents: boolean;
}

function recordingListener(into: Received[]): UploadEvents {
  return {
    async assetStored(event) {
      into.push({ kind: 'assetStored', event });
    },
    async importStarted(event) {
      into.push({ kind: 'importStarted', event });
    },
    async importFinished(event) {
      into.push({ kind: 'importFinished', event });
    },
  };
}

function inProcessHarness(listener?: (into: Received[]) => UploadEvents) {
  const received: Received[] = [];
  const events = new InProcessUploadEvents();
  events.bind((listener ?? recordingListener)(received));
  return { events, received: () => received, settle: () => events.drain(), carriesAssetEvents: true } satisfies UploadEventsHarness;
}

/** A recording fake of PutEvents; `refuse` makes it answer with a failed entry, as EventBridge does. */
function fakeEventBridge(refuse = false) {
  const entries: PutEventsRequestEntry[] = [];
  const client = {
    async send(command: object) {
      if (!(command instanceof PutEventsCommand)) throw new Error(`unexpected EventBridge call ${command.constructor.name}`);
      entries.push(...(command.input.Entries ?? []));
      return refuse
        ? { FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }], $metadata: {} }
        : { FailedEntryCount: 0, Entries: [{ EventId: `e${entries.length}` }], $metadata: {} };
    },
  };
  return { client: client as unknown as EventBridgeClient, entries };
}

function eventBridgeHarness() {
  const { client, entries } = fakeEventBridge();
  const kinds = new Map<string, Received['kind']>([
    [UPLOAD_EVENT_TYPES.importStarted, 'importStarted'],
    [UPLOAD_EVENT_TYPES.importFinished, 'importFinished'],
  ]);
  return {
    entries,
    events: new EventBridgeUploadEvents(client),
    // The dispatcher's rule matches the source; its handler picks the hook call by detail type.
    received: () =>
      entries
        .filter((e) => e.Source === UPLOAD_EVENT_SOURCE && kinds.has(e.DetailType ?? ''))
        .map((e) => ({ kind: kinds.get(e.DetailType!)!, event: JSON.parse(e.Detail!) }) as Received),
    settle: async () => {},
    carriesAssetEvents: false,
  } satisfies UploadEventsHarness & { entries: PutEventsRequestEntry[] };
}

const ADAPTERS: [string, () => UploadEventsHarness][] = [
  ['InProcessUploadEvents', () => inProcessHarness()],
  ['EventBridgeUploadEvents (recording fake of PutEvents)', eventBridgeHarness],
];

const started: ImportStartedEvent = { datasetId: 'ds1', jobId: 'job1', apiUrl: 'https://api.example.org' };
const finished: ImportFinishedEvent = { datasetId: 'ds1', jobId: 'job1', graphs: ['https://example.org/graphs/a', 'https://example.org/graphs/b'], ok: true };
const asset: AssetStoredEvent = { datasetId: 'ds1', identifier: 'asset1', versionId: 'v1', apiUrl: 'https://api.example.org' };

describe.each(ADAPTERS)('UploadEvents contract: %s', (_name, create) => {
  it('hands an import start to the hooks with its dataset, job and API URL', async () => {
    const h = create();
    await h.events.importStarted(started);
    await h.settle();
    expect(h.received()).toEqual([{ kind: 'importStarted', event: started }]);
  });

  it('hands an import end to the hooks with the graphs it wrote and whether it succeeded', async () => {
    const h = create();
    await h.events.importFinished(finished);
    await h.events.importFinished({ datasetId: 'ds1', jobId: 'job2', graphs: [], ok: false });
    await h.settle();
    expect(h.received()).toEqual([
      { kind: 'importFinished', event: finished },
      { kind: 'importFinished', event: { datasetId: 'ds1', jobId: 'job2', graphs: [], ok: false } },
    ]);
  });

  it('keeps the order of one import: started before finished', async () => {
    const h = create();
    await h.events.importStarted(started);
    await h.events.importFinished(finished);
    await h.settle();
    expect(h.received().map((r) => r.kind)).toEqual(['importStarted', 'importFinished']);
  });

  it('asset events: in-process they reach the hooks from here; on AWS (by design) the bucket notification carries them and this call sends nothing', async () => {
    const h = create();
    await h.events.assetStored(asset);
    await h.settle();
    expect(h.received()).toEqual(h.carriesAssetEvents ? [{ kind: 'assetStored', event: asset }] : []);
  });
});

describe('InProcessUploadEvents specifics', () => {
  it('delivers nothing, and fails nothing, before a listener is bound', async () => {
    const events = new InProcessUploadEvents();
    await expect(events.assetStored(asset)).resolves.toBeUndefined();
    await expect(events.importStarted(started)).resolves.toBeUndefined();
    await expect(events.importFinished(finished)).resolves.toBeUndefined();
  });

  it('an asset upload does not wait for its hooks; drain() does', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = inProcessHarness((into) => ({
      ...recordingListener(into),
      async assetStored(event) {
        await gate;
        into.push({ kind: 'assetStored', event });
      },
    }));
    await h.events.assetStored(asset);
    expect(h.received()).toEqual([]);
    release();
    await h.settle();
    expect(h.received()).toEqual([{ kind: 'assetStored', event: asset }]);
  });

  it('a failing hook after an import or asset does not fail the upload; a failing start does (the job then has no waiting run)', async () => {
    const failing: UploadEvents = {
      assetStored: async () => Promise.reject(new Error('asset hook broke')),
      importStarted: async () => Promise.reject(new Error('start hook broke')),
      importFinished: async () => Promise.reject(new Error('finish hook broke')),
    };
    // The two failures below are logged (expected in this test's output).
    const events = new InProcessUploadEvents();
    events.bind(failing);
    await expect(events.importFinished(finished)).resolves.toBeUndefined();
    await expect(events.assetStored(asset)).resolves.toBeUndefined();
    await events.drain();
    await expect(events.importStarted(started)).rejects.toThrow('start hook broke');
  });
});

describe('EventBridgeUploadEvents specifics', () => {
  it('puts one entry per import event on the default bus, source and detail type named for the dispatcher rule', async () => {
    const h = eventBridgeHarness();
    await h.events.importStarted(started);
    await h.events.importFinished(finished);
    expect(h.entries).toEqual([
      { Source: UPLOAD_EVENT_SOURCE, DetailType: 'Import started', Detail: JSON.stringify(started) },
      { Source: UPLOAD_EVENT_SOURCE, DetailType: 'Import finished', Detail: JSON.stringify(finished) },
    ]);
  });

  it('fails when EventBridge refuses the entry, with its reason', async () => {
    const { client } = fakeEventBridge(true);
    await expect(new EventBridgeUploadEvents(client).importFinished(finished)).rejects.toThrow(/refused the Import finished event: try again/);
  });
});
