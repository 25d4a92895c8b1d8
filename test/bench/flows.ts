/**
 * Flows bench: a five-task linear flow of Set variables tasks, timed from the start request to
 * `finished` through HTTP (median, p99), next to the same compiled ASL run in this process by
 * aws-local-stepfunctions with empty handlers; then 100 runs started at once.
 */
import '../../functions/adapters/local/promise-with-resolvers.js';
import { StateMachine } from 'aws-local-stepfunctions';
import type { FlowDefinition } from '../../functions/domain/flows/blueprints/model.js';
import { parseFlow } from '../../functions/domain/flows/blueprints/validate.js';
import { applySubstitutions, compileFlow, TASK_WORKER_SUBSTITUTION } from '../../statemachines/compile.js';
import { forLocalRun, localTaskHandlers } from '../../statemachines/local.js';
import { apiFor, ms, secs, sleep, stats } from './bench-http.js';
import type { RunningPlatform } from './embedded-server.js';

const RUNS = Number(process.env.BENCH_FLOW_RUNS ?? 100);
const CONCURRENT = Number(process.env.BENCH_FLOW_CONCURRENT ?? 100);
const TASKS = 5;
const FINAL = new Set(['finished', 'failed', 'timeout', 'aborted']);
/** How often the client asks whether a run ended (finer polling mostly measures the polling). */
const POLL_MS = 5;

/** The administrator's console session (flows are created only from one). */
async function consoleSession(platform: RunningPlatform): Promise<Record<string, string>> {
  const login = await fetch(`${platform.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ accountName: 'admin', password: platform.adminPassword }),
  });
  if (!login.ok) throw new Error(`login: ${login.status} ${await login.text()}`);
  const { csrfToken } = (await login.json()) as { csrfToken: string };
  return { cookie: login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '), 'x-csrf-token': csrfToken };
}

function linearFlow(): Record<string, unknown> {
  const tasks = Array.from({ length: TASKS }, (_, i) => ({
    id: `t${i + 1}`,
    label: `Step ${i + 1}`,
    type: 'setVariables',
    settings: { values: { [`out${i + 1}`]: `step ${i + 1} for ?system_triggererAccountName` } },
  }));
  return {
    id: 'bench-linear',
    name: 'Bench: five Set variables tasks',
    accessLevel: 'Private',
    tasks,
    connections: tasks.slice(1).map((t, i) => ({ from: tasks[i]!.id, to: t.id })),
    outputVariables: tasks.map((_, i) => ({ name: `out${i + 1}` })),
  };
}

/** The same ASL, run here with handlers that do nothing: what the executor alone costs. */
async function bareRuns(flow: FlowDefinition, runs: number): Promise<number[]> {
  const definition = forLocalRun(applySubstitutions(compileFlow(flow), { [TASK_WORKER_SUBSTITUTION]: 'arn:aws:lambda:local:000000000000:function:bench' }));
  const machine = new StateMachine(definition as never, { validationOptions: { noValidate: true } });
  const handlers = localTaskHandlers(definition, () => ({}));
  const samples: number[] = [];
  for (let i = 0; i < runs + 10; i++) {
    const start = performance.now();
    await machine.run({ run: { id: `bare-${i}` }, variables: {} } as never, { overrides: { taskResourceLocalHandlers: handlers as never } }).result;
    if (i >= 10) samples.push(performance.now() - start);
  }
  return samples;
}

export async function benchFlows(platform: RunningPlatform): Promise<void> {
  const api = apiFor(platform);
  await api.json('PATCH', '/admin/flows', { flowsEnabled: true });
  const definition = linearFlow();
  await api.json('POST', '/flows/blueprints/admin', definition, await consoleSession(platform));

  const untilEnded = async (runId: string, deadlineMs: number) => {
    for (let i = 0; i < 100_000 && performance.now() < deadlineMs; i++) {
      const run = await api.json('GET', `/flows/runs/${runId}`);
      if (FINAL.has(run.status)) return run;
      await sleep(POLL_MS);
    }
    throw new Error(`run ${runId} did not end in time`);
  };

  console.log(`# Flows: a linear flow of ${TASKS} Set variables tasks, start request → finished`);
  const client: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < RUNS + 10; i++) {
    const start = performance.now();
    const run = await api.json('POST', '/flows/blueprints/admin/bench-linear/run');
    const ended = await untilEnded(run.id, performance.now() + 30_000);
    if (ended.status !== 'finished') throw new Error(`run ${run.id} ended ${ended.status}: ${JSON.stringify(ended.error)}`);
    if (i >= 10) {
      client.push(performance.now() - start);
      server.push(Date.parse(ended.finishedAt) - Date.parse(ended.createdAt));
    }
  }
  const bare = stats(await bareRuns(parseFlow(definition), RUNS));
  const ours = stats(client);
  const serverSide = stats(server);
  const added = (ours.median - bare.median) / TASKS;
  console.log(`platform, through HTTP (polling every ${POLL_MS} ms): median ${ms(ours.median)}, p99 ${ms(ours.p99)} over ${ours.runs} runs`);
  console.log(`platform, server timestamps createdAt → finishedAt: median ${ms(serverSide.median)}, p99 ${ms(serverSide.p99)}`);
  console.log(`bare aws-local-stepfunctions, empty handlers: median ${ms(bare.median)}, p99 ${ms(bare.p99)}`);
  console.log(
    `added per task: ${ms(added)} (aim < 20 ms: ${added < 20 ? 'met' : 'missed'}); ratio to bare ${(ours.median / bare.median).toFixed(1)}× ` +
      `(aim < 2×: ${ours.median < 2 * bare.median ? 'met' : 'missed'}; the bare run does no I/O at all, so the per-task figure is the meaningful one)`,
  );

  const start = performance.now();
  const started = await Promise.all(Array.from({ length: CONCURRENT }, () => api.json('POST', '/flows/blueprints/admin/bench-linear/run')));
  const startedMs = performance.now() - start;
  const deadline = start + 60_000;
  const ended = await Promise.all(
    started.map(async (r: { id: string }) => {
      for (let i = 0; i < 10_000 && performance.now() < deadline; i++) {
        const run = await api.json('GET', `/flows/runs/${r.id}`);
        if (FINAL.has(run.status)) return run;
        await sleep(20);
      }
      return { status: 'still running' };
    }),
  );
  const total = performance.now() - start;
  const finished = ended.filter((r: { status: string }) => r.status === 'finished').length;
  console.log(
    `${CONCURRENT} concurrent runs: all started in ${secs(startedMs / 1000)}, ${finished}/${CONCURRENT} finished within ${secs(total / 1000)} (aim: all within 10 s: ${finished === CONCURRENT && total < 10_000 ? 'met' : 'missed'})`,
  );
}

/**
 * An asset upload hook: the time from the upload's last byte (the asset version's `uploadedAt`,
 * stamped when the platform has the whole file) to the hook run's first task starting.
 */
export async function benchHookLatency(platform: RunningPlatform, uploads = Number(process.env.BENCH_HOOK_UPLOADS ?? 30)): Promise<void> {
  const api = apiFor(platform);
  const session = await consoleSession(platform);
  await api.json('POST', '/datasets/admin', { name: 'hook-bench', accessLevel: 'private' });
  await api.json('POST', '/flows/blueprints/admin', {
    id: 'bench-hook',
    name: 'Bench: asset hook',
    accessLevel: 'Private',
    outputVariables: [{ name: 'asset' }],
    tasks: [{ id: 'note', label: 'Note the asset', type: 'setVariables', settings: { values: { asset: '?system_uploadedAssetName' } } }],
    connections: [],
  }, session);
  const hook = await api.json('POST', '/flows/blueprints/admin/bench-hook/hooks', {
    label: 'Every asset',
    type: 'assetUpload',
    dataset: { account: 'admin', dataset: 'hook-bench' },
  }, session);

  const serverSide: number[] = [];
  const clientSide: number[] = [];
  for (let i = 0; i < uploads + 3; i++) {
    const form = new FormData();
    form.append('file', new Blob([`asset ${i}\n`.repeat(100)]), `file-${i}.txt`);
    const res = await fetch(`${platform.url}/datasets/admin/hook-bench/assets`, { method: 'POST', headers: api.headers, body: form });
    const answered = Date.now();
    const asset = (await res.json()) as { identifier: string; versions: { uploadedAt?: string; createdAt?: string }[] };
    let firstTaskAt: number | undefined;
    for (let j = 0; j < 5_000 && firstTaskAt === undefined; j++) {
      const runs = (await api.json('GET', `/flows/runs?hookId=${hook.id}&assetId=${asset.identifier}`)) as { id: string }[];
      if (runs[0]) {
        const tasks = (await api.json('GET', `/flows/taskInstances?runId=${runs[0].id}`)) as { startedAt?: string }[];
        if (tasks[0]?.startedAt) firstTaskAt = Date.parse(tasks[0].startedAt);
      }
      if (firstTaskAt === undefined) await sleep(2);
    }
    if (firstTaskAt === undefined) throw new Error(`no hook run for upload ${i}`);
    const version = asset.versions[asset.versions.length - 1]!;
    const uploadedAt = Date.parse(version.uploadedAt ?? version.createdAt ?? '');
    if (i >= 3) {
      serverSide.push(firstTaskAt - uploadedAt);
      clientSide.push(firstTaskAt - answered);
    }
  }
  const s = stats(serverSide);
  const c = stats(clientSide);
  console.log(`# Flows: asset upload hook, upload's last byte → hook run's first task started (${s.runs} uploads)`);
  console.log(`server timestamps (asset version uploadedAt → task startedAt): median ${ms(s.median)}, p99 ${ms(s.p99)} (aim < 200 ms: ${s.median < 200 ? 'met' : 'missed'})`);
  console.log(`after the upload's response reached the client: median ${ms(c.median)}, p99 ${ms(c.p99)} (negative: the task had started before the response arrived)`);
}
