import type { FlowStore } from '../../ports/flow-store.js';

type Args = unknown[];
type Invalidation = (args: Args) => { keys?: string[]; methods?: (keyof FlowStore)[] };

const key = (method: keyof FlowStore, ...args: unknown[]) => `${method}\u0000${JSON.stringify(args)}`;
const ofRun = (runId: unknown) => [key('getRun', runId), key('getRunSecret', runId)];

/** Point reads served from memory on the embedded platform. */
const CACHED = new Set<keyof FlowStore>(['getSwitches', 'getFlow', 'getFlowByUid', 'getFlowVersion', 'getMaskedValues', 'getRun', 'getRunSecret', 'getSchedule', 'getHook']);

/**
 * What each write may change. Run writes (the hot path of every flow run) touch only their own
 * run's entries; the rare writes of flows, versions, schedules and hooks clear their read method.
 */
const WRITES: Partial<Record<keyof FlowStore, Invalidation>> = {
  putSwitches: () => ({ methods: ['getSwitches'] }),
  createFlow: () => ({ methods: ['getFlow', 'getFlowByUid'] }),
  replaceFlow: () => ({ methods: ['getFlow', 'getFlowByUid'] }),
  deleteFlow: () => ({ methods: ['getFlow', 'getFlowByUid'] }),
  putFlowVersion: () => ({ methods: ['getFlowVersion'] }),
  setFlowVersionExecutable: () => ({ methods: ['getFlowVersion'] }),
  deleteFlowVersion: () => ({ methods: ['getFlowVersion'] }),
  putMaskedValues: ([record]) => ({ keys: [key('getMaskedValues', (record as { blueprintUid: string }).blueprintUid)] }),
  deleteMaskedValues: ([uid]) => ({ keys: [key('getMaskedValues', uid)] }),
  createRun: ([run]) => ({ keys: ofRun((run as { id: string }).id) }),
  updateRun: ([run]) => ({ keys: ofRun((run as { id: string }).id) }),
  patchRun: ([runId]) => ({ keys: ofRun(runId) }),
  deleteRun: ([runId]) => ({ keys: ofRun(runId) }),
  putTaskInstance: () => ({ keys: [] }),
  putRunSecret: ([runId]) => ({ keys: ofRun(runId) }),
  deleteRunSecret: ([runId]) => ({ keys: ofRun(runId) }),
  putSchedule: () => ({ methods: ['getSchedule'] }),
  deleteSchedule: () => ({ methods: ['getSchedule'] }),
  putHook: () => ({ methods: ['getHook'] }),
  deleteHook: () => ({ methods: ['getHook'] }),
};

const MAX_ENTRIES = 20_000;

/** Writes whose outcome is the new value of one cached read (when they succeeded). */
function writtenThrough(method: keyof FlowStore, args: Args, result: unknown): { key: string; value: unknown } | undefined {
  if (method === 'patchRun' && result) return { key: key('getRun', args[0]), value: result };
  if (method === 'createRun' || (method === 'updateRun' && result === true)) {
    const run = args[0] as { id: string };
    return { key: key('getRun', run.id), value: run };
  }
  if (method === 'putRunSecret') return { key: key('getRunSecret', args[0]), value: args[1] };
  return undefined;
}

/**
 * An exact read cache in front of the embedded platform's flow store, like the metadata store's
 * (`cached-metadata-store.ts`): this process is the only writer of its LevelDB, and every write
 * goes through here. Unlike that cache it invalidates per run, because every task of every run
 * writes. A read that overlaps a write of its entry is not kept (per-entry and per-method
 * generations). Any method not listed counts as a write that clears everything.
 */
export function cachedFlowStore(inner: FlowStore): FlowStore {
  const cache = new Map<string, Promise<unknown>>();
  const generations = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const bump = (name: string) => generations.set(name, (generations.get(name) ?? 0) + 1);
  const stamp = (k: string, method: string) => `${generations.get(k) ?? 0}/${generations.get(method) ?? 0}/${generations.get('*') ?? 0}`;

  const invalidate = (keys: string[], methods: string[], all: boolean) => {
    for (const k of keys) {
      bump(k);
      cache.delete(k);
    }
    for (const m of methods) bump(m);
    if (all) bump('*');
    if (methods.length > 0 || all) {
      for (const k of cache.keys()) if (all || methods.includes(k.slice(0, k.indexOf('\u0000')))) cache.delete(k);
    }
  };

  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = property as keyof FlowStore;
      const call = (args: Args) => (value as (...a: Args) => Promise<unknown>).apply(target, args);
      if (CACHED.has(method)) {
        return (...args: Args) => {
          const k = key(method, ...args);
          const hit = cache.get(k);
          if (hit) return hit.then((v) => structuredClone(v));
          const before = stamp(k, method);
          const result = call(args);
          if (!inFlight.get(k) && !inFlight.get(method) && !inFlight.get('*')) {
            if (cache.size >= MAX_ENTRIES) cache.clear();
            cache.set(k, result);
            result.then(
              () => {
                if (stamp(k, method) !== before) cache.delete(k);
              },
              () => cache.delete(k),
            );
          }
          return result.then((v) => structuredClone(v));
        };
      }
      if (!method.startsWith('put') && !method.startsWith('create') && !method.startsWith('update') && !method.startsWith('replace') && !method.startsWith('delete') && !method.startsWith('set') && !method.startsWith('patch')) {
        return value.bind(target);
      }
      return async (...args: Args) => {
        const scope = WRITES[method]?.(args);
        const keys = scope?.keys ?? [];
        const methods = scope?.methods ?? [];
        const all = !scope;
        const marks = all ? ['*'] : [...keys, ...methods];
        for (const m of marks) inFlight.set(m, (inFlight.get(m) ?? 0) + 1);
        invalidate(keys, methods, all);
        let succeeded = false;
        let result: unknown;
        try {
          result = await call(args);
          succeeded = true;
          return result;
        } finally {
          for (const m of marks) inFlight.set(m, (inFlight.get(m) ?? 1) - 1);
          invalidate(keys, methods, all);
          // A run just written is read back by the next task at once: keep what was written.
          const written = succeeded ? writtenThrough(method, args, result) : undefined;
          if (written && !inFlight.get(written.key)) cache.set(written.key, Promise.resolve(structuredClone(written.value)));
        }
      };
    },
  });
}
