import { z } from 'zod';
import type { AccountRecord } from '../../../domain/accounts/accounts.js';
import { NotFoundError, UnsupportedMediaTypeError, ValidationError } from '../../../domain/shared/errors.js';
import { parseRunFilters, RUN_FILTER_PARAMS } from './run-filters.js';
import type { VisibleFlow } from '../../../domain/flows/blueprints/blueprint-service.js';
import type { FlowRecord, FlowVersionRecord, RunRecord, TaskInstanceRecord } from '../../../domain/flows/records.js';
import { flowFromTurtle, flowToTurtle } from '../../../domain/flows/blueprints/turtle.js';
import { taskTypeList } from '../../../domain/flows/tasks/catalogue.js';
import type { OperationContext, Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { storedFileResponse } from '../../stored-files.js';
import { MAX_JSON_BODY_BYTES, nextLink, parseJsonBody } from '../../request.js';
import { checkQueryParams } from '../../query-params.js';

export const SwitchesBody = z.object({ flowsEnabled: z.boolean().optional(), sparqlUpdateTaskEnabled: z.boolean().optional() }).strict();
export const CopyBody = z.object({ account: z.string().optional(), id: z.string().optional(), name: z.string().optional() }).strict();
export const MoveBody = z.object({ account: z.string('give the name of the account the flow goes to') }).strict();
export const PresetBody = z.object({ values: z.record(z.string(), z.string()).optional(), default: z.boolean().optional() }).strict();
export const MaskedValueBody = z.object({ value: z.string('give the value as text').max(10_000) }).strict();

const flowUrl = (ctx: OperationContext, owner: AccountRecord, flow: FlowRecord) =>
  `${ctx.apiUrl}/flows/blueprints/${encodeURIComponent(owner.accountName)}/${encodeURIComponent(flow.flowId)}`;

function flowView(ctx: OperationContext, found: Pick<VisibleFlow, 'flow' | 'owner'>, version?: FlowVersionRecord) {
  const { flow, owner } = found;
  return {
    id: flow.flowId,
    blueprintId: flow.uid,
    owner: { accountName: owner.accountName, type: owner.type },
    name: flow.name,
    accessLevel: flow.accessLevel,
    latestVersion: flow.latestVersion,
    createdAt: flow.createdAt,
    updatedAt: flow.updatedAt,
    ...(version
      ? {
          version: version.version,
          versionCreatedAt: version.createdAt,
          ...(version.restoredFrom !== undefined ? { restoredFrom: version.restoredFrom } : {}),
          description: version.definition.description,
          definition: version.definition,
        }
      : {}),
    url: flowUrl(ctx, owner, flow),
  };
}

function runView(ctx: OperationContext, run: RunRecord, owner: AccountRecord | undefined, startedBy: string | undefined) {
  return {
    id: run.id,
    blueprintId: run.blueprintUid,
    flowId: run.flowId,
    account: owner?.accountName,
    version: run.version,
    status: run.status,
    startedFrom: run.startedFrom,
    startedBy,
    ...(run.preset !== undefined ? { preset: run.preset } : {}),
    variables: run.variables,
    ...(run.description !== undefined ? { description: run.description } : {}),
    createdAt: run.createdAt,
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    ...(run.error ? { error: run.error } : {}),
    url: `${ctx.apiUrl}/flows/runs/${run.id}`,
    taskInstancesUrl: `${ctx.apiUrl}/flows/taskInstances?runId=${run.id}`,
  };
}

function taskInstanceView(ctx: OperationContext, i: TaskInstanceRecord) {
  return {
    id: i.id,
    runId: i.runId,
    taskId: i.taskId,
    label: i.label,
    type: i.type,
    status: i.status,
    ...(i.startedAt ? { startedAt: i.startedAt } : {}),
    ...(i.finishedAt ? { finishedAt: i.finishedAt } : {}),
    log: i.log,
    ...(i.error ? { error: i.error } : {}),
    ...(i.output !== undefined ? { output: i.output } : {}),
    artifacts: i.artifacts.map((a) => ({
      id: a.id,
      fileName: a.fileName,
      contentType: a.contentType,
      size: a.size,
      createdAt: a.createdAt,
      url: `${ctx.apiUrl}/flows/taskInstances/${encodeURIComponent(i.id)}/artifacts/${a.id}`,
    })),
  };
}

const versionParam = (raw: string | undefined): number => {
  if (!raw || !/^[1-9][0-9]{0,8}$/.test(raw)) throw new ValidationError(`"${raw}" is not a version number (versions count from 1).`);
  return Number(raw);
};

/** The definition a console sends: JSON, or pasted Turtle (a downloaded flow). */
function definitionBody(ctx: OperationContext): unknown {
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'text/turtle') {
    if (ctx.req.body.length > MAX_JSON_BODY_BYTES) throw new ValidationError(`The Turtle is larger than ${MAX_JSON_BODY_BYTES} bytes.`);
    return flowFromTurtle(ctx.req.body.toString('utf8'));
  }
  if (ctx.req.body.length === 0) throw new ValidationError('Send the flow definition as JSON ("Content-Type: application/json") or pasted Turtle ("Content-Type: text/turtle").');
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new UnsupportedMediaTypeError(`Send the flow definition as JSON ("Content-Type: application/json") or Turtle ("Content-Type: text/turtle"); got "${type || 'none'}".`);
  }
  return parseJsonBody(ctx.req, z.unknown());
}

/** Start values: the query string and a JSON body, one value per variable. */
function startValues(ctx: OperationContext): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of new Set(ctx.req.query.keys())) {
    const all = ctx.req.query.getAll(name);
    if (all.length > 1) throw new ValidationError(`Variable "${name}": give one value (it was given ${all.length} times).`);
    values[name] = all[0];
  }
  if (ctx.req.body.length > 0) {
    const body = parseJsonBody(ctx.req, z.record(z.string(), z.unknown(), 'send the variables as a JSON object { "name": "value" }'));
    for (const [name, value] of Object.entries(body)) {
      if (name in values) throw new ValidationError(`Variable "${name}": give one value (it is in both the query string and the body).`);
      values[name] = value;
    }
  }
  return values;
}

async function accountNames(ctx: OperationContext, uids: Iterable<string>): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const uid of new Set(uids)) {
    const account = await ctx.services.platform.store.getAccount(uid);
    if (account) names.set(uid, account.accountName);
  }
  return names;
}

async function oneRun(ctx: OperationContext, run: RunRecord, owner?: AccountRecord) {
  const names = await accountNames(ctx, [run.startedByUid]);
  const ownerAccount = owner ?? (await ctx.services.platform.store.getAccount(run.ownerUid)) ?? undefined;
  return runView(ctx, run, ownerAccount, names.get(run.startedByUid));
}

export const flowOperations: Operations = checkQueryParams({
  async getFlowSwitches(ctx) {
    if (!ctx.caller?.isAdmin) throw new NotFoundError('Not found.');
    return jsonResponse(200, await ctx.services.flows.getSwitches());
  },

  async setFlowSwitches(ctx) {
    const body = parseJsonBody(ctx.req, SwitchesBody);
    return jsonResponse(200, await ctx.services.flows.setSwitches(ctx.caller, body));
  },

  async listFlows(ctx) {
    const found = await ctx.services.flows.list(ctx.caller, ctx.params.account!);
    return jsonResponse(200, found.map((f) => flowView(ctx, f)));
  },

  async createFlow(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const created = await ctx.services.flows.create(ctx.caller, ctx.params.account!, definitionBody(ctx));
    return jsonResponse(201, flowView(ctx, created, created.version), { location: flowUrl(ctx, created.owner, created.flow) });
  },

  async getFlow(ctx) {
    const found = await ctx.services.flows.get(ctx.caller, ctx.params.account!, ctx.params.flow!);
    return jsonResponse(200, flowView(ctx, found, found.version));
  },

  async saveFlow(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const saved = await ctx.services.flows.save(ctx.caller, ctx.params.account!, ctx.params.flow!, definitionBody(ctx));
    return jsonResponse(200, flowView(ctx, saved, saved.version));
  },

  async deleteFlow(ctx) {
    await ctx.services.flows.delete(ctx.caller, ctx.params.account!, ctx.params.flow!);
    return { status: 204, headers: {} };
  },

  async downloadFlow(ctx) {
    const found = await ctx.services.flows.get(ctx.caller, ctx.params.account!, ctx.params.flow!);
    const turtle = flowToTurtle(found.version.definition, { flowIri: flowUrl(ctx, found.owner, found.flow) });
    return {
      status: 200,
      headers: {
        'content-type': 'text/turtle; charset=utf-8',
        'content-disposition': `attachment; filename="${found.flow.flowId}.ttl"`,
      },
      body: turtle,
    };
  },

  async listFlowVersions(ctx) {
    const versions = await ctx.services.flows.versions(ctx.caller, ctx.params.account!, ctx.params.flow!);
    return jsonResponse(
      200,
      versions.map((v) => ({ version: v.version, createdAt: v.createdAt, name: v.definition.name, ...(v.restoredFrom !== undefined ? { restoredFrom: v.restoredFrom } : {}) })),
    );
  },

  async getFlowVersion(ctx) {
    const found = await ctx.services.flows.get(ctx.caller, ctx.params.account!, ctx.params.flow!, versionParam(ctx.params.version));
    return jsonResponse(200, flowView(ctx, found, found.version));
  },

  async restoreFlowVersion(ctx) {
    const saved = await ctx.services.flows.restore(ctx.caller, ctx.params.account!, ctx.params.flow!, versionParam(ctx.params.version));
    return jsonResponse(200, flowView(ctx, saved, saved.version));
  },

  async copyFlow(ctx) {
    const body = parseJsonBody(ctx.req, CopyBody);
    const copy = await ctx.services.flows.copy(ctx.caller, ctx.params.account!, ctx.params.flow!, body);
    return jsonResponse(201, flowView(ctx, copy, copy.version), { location: flowUrl(ctx, copy.owner, copy.flow) });
  },

  async moveFlow(ctx) {
    const body = parseJsonBody(ctx.req, MoveBody);
    const moved = await ctx.services.flows.move(ctx.caller, ctx.params.account!, ctx.params.flow!, body);
    return jsonResponse(200, flowView(ctx, moved), { location: flowUrl(ctx, moved.owner, moved.flow) });
  },

  async listPresets(ctx) {
    return jsonResponse(200, await ctx.services.flows.presets(ctx.caller, ctx.params.account!, ctx.params.flow!));
  },

  async putPreset(ctx) {
    const body = parseJsonBody(ctx.req, PresetBody);
    const saved = await ctx.services.flows.putPreset(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.preset!, body);
    return jsonResponse(200, saved.preset);
  },

  async deletePreset(ctx) {
    await ctx.services.flows.deletePreset(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.preset!);
    return { status: 204, headers: {} };
  },

  async listMaskedValues(ctx) {
    return jsonResponse(200, await ctx.services.flows.maskedValues(ctx.caller, ctx.params.account!, ctx.params.flow!));
  },

  async getMaskedValue(ctx) {
    const value = await ctx.services.flows.maskedValue(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.name!);
    return jsonResponse(200, { name: ctx.params.name, isSet: value !== null, ...(value !== null ? { value } : {}) });
  },

  async putMaskedValue(ctx) {
    const body = parseJsonBody(ctx.req, MaskedValueBody);
    await ctx.services.flows.setMaskedValue(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.name!, body.value);
    return { status: 204, headers: {} };
  },

  async deleteMaskedValue(ctx) {
    await ctx.services.flows.setMaskedValue(ctx.caller, ctx.params.account!, ctx.params.flow!, ctx.params.name!, null);
    return { status: 204, headers: {} };
  },

  async startRun(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const values = startValues(ctx);
    const run = await ctx.services.runStarter.start(ctx.caller, ctx.params.account!, ctx.params.flow!, { values, preset: ctx.params.preset }, ctx.apiUrl);
    return jsonResponse(201, await oneRun(ctx, run), { location: `${ctx.apiUrl}/flows/runs/${run.id}` });
  },

  async listRuns(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const filters = parseRunFilters(ctx.req.query);
    const { runs, flows, next } = await ctx.services.flowRuns.list(ctx.caller, filters);
    const names = await accountNames(ctx, runs.map((r) => r.startedByUid));
    // A page read as many runs as one request may: the Link header goes on from there.
    return jsonResponse(200, runs.map((r) => runView(ctx, r, flows.get(r.blueprintUid)?.owner, names.get(r.startedByUid))), nextLink(ctx.req, ctx.apiUrl, next));
  },

  async getRun(ctx) {
    const { run, owner } = await ctx.services.flowRuns.get(ctx.caller, ctx.params.run!);
    return jsonResponse(200, await oneRun(ctx, run, owner));
  },

  async abortRun(ctx) {
    const run = await ctx.services.flowRuns.abort(ctx.caller, ctx.params.run!);
    return jsonResponse(200, await oneRun(ctx, run));
  },

  async listTaskInstances(ctx) {
    await ctx.services.flows.requireEnabled(ctx.caller);
    const runIds = ctx.req.query.getAll('runId');
    if (runIds.length !== 1 || !runIds[0]) throw new ValidationError('runId: give the run whose tasks to list, once (GET /flows/taskInstances?runId=<run>).');
    const instances = await ctx.services.flowRuns.taskInstances(ctx.caller, runIds[0]);
    return jsonResponse(200, instances.map((i) => taskInstanceView(ctx, i)));
  },

  /** On AWS a redirect to a short-lived S3 link; embedded, the bytes stream. */
  /** The task catalogue the console builds its palette from (issue 17): public, like the spec's list of task types. */
  async listTaskTypes(ctx) {
    return jsonResponse(200, taskTypeList(await ctx.services.flows.getSwitches()));
  },

  async downloadArtifact(ctx) {
    const { artifact, open } = await ctx.services.flowRuns.locateArtifact(ctx.caller, ctx.params.task!, ctx.params.artifact!);
    const file = { key: artifact.blobKey, fileName: artifact.fileName, contentType: artifact.contentType, size: artifact.size };
    return storedFileResponse(ctx.services.platform.blobs.artifacts, file, open);
  },
}, { listRuns: RUN_FILTER_PARAMS, listTaskInstances: ['runId'] }, ['startRun']);
