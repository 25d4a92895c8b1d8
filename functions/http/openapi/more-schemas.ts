/**
 * Zod schemas of the JSON answers of flows (flows, versions, presets, masked values, schedules,
 * hooks, runs, task instances), text search services (Elasticsearch's shapes), dataset webhooks,
 * graph imports and the GraphQL status, for the OpenAPI document. As in response-schemas.ts:
 * the fields a view always writes are required, the rest optional, every object open.
 */
import { z } from 'zod';

const text = z.string();
const time = z.string();
const ownerName = z.string().nullish();

export const FlowSwitchesView = z.looseObject({ flowsEnabled: z.boolean() }).meta({ id: 'FlowSwitches' });

export const TaskTypeView = z
  .looseObject({ type: text, title: text, kind: z.enum(['control', 'data']), mayRunLong: z.boolean(), enabled: z.boolean() })
  .meta({ id: 'TaskType' });

export const FlowView = z
  .looseObject({
    id: text,
    blueprintId: text,
    owner: z.looseObject({ accountName: text, type: text }),
    name: text,
    accessLevel: text,
    latestVersion: z.number().int(),
    createdAt: time,
    updatedAt: time,
    url: text,
    version: z.number().int().optional(),
    definition: z.looseObject({}).optional(),
  })
  .meta({ id: 'Flow' });

export const FlowVersionSummary = z.looseObject({ version: z.number().int(), createdAt: time, name: z.string().nullish(), restoredFrom: z.number().int().optional() }).meta({ id: 'FlowVersionSummary' });

export const PresetView = z.looseObject({ name: text, values: z.record(z.string(), z.unknown()) }).meta({ id: 'FlowPreset' });

export const MaskedValueView = z.looseObject({ name: text, isSet: z.boolean() }).meta({ id: 'MaskedValue' });

export const ScheduleView = z
  .looseObject({
    id: text,
    label: z.string().nullish(),
    recurrence: z.looseObject({}),
    timeZone: text,
    values: z.record(z.string(), z.unknown()).nullish(),
    enabled: z.boolean(),
    owner: ownerName,
    nextRunAt: time.nullable(),
    createdAt: time,
    updatedAt: time,
    url: text,
    runsUrl: text,
  })
  .meta({ id: 'FlowSchedule' });

export const FlowHookView = z
  .looseObject({
    id: text,
    label: z.string().nullish(),
    enabled: z.boolean(),
    type: z.enum(['assetUpload', 'dataUpload']),
    dataset: z.looseObject({ account: text, dataset: text }).nullable(),
    values: z.record(z.string(), z.unknown()).nullish(),
    preset: z.string().optional(),
    owner: ownerName,
    createdAt: time,
    updatedAt: time,
    runsUrl: text,
  })
  .meta({ id: 'FlowHook' });

export const FlowRunView = z
  .looseObject({
    id: text,
    blueprintId: text,
    flowId: text,
    account: ownerName,
    version: z.number().int(),
    status: text,
    startedFrom: z.unknown(),
    startedBy: ownerName,
    variables: z.record(z.string(), z.unknown()).nullish(),
    createdAt: time,
    url: text,
    taskInstancesUrl: text,
  })
  .meta({ id: 'FlowRun' });

export const TaskInstanceView = z
  .looseObject({
    id: text,
    runId: text,
    taskId: text,
    type: text,
    status: text,
    log: z.unknown(),
    artifacts: z.array(z.looseObject({ id: text, fileName: text, contentType: z.string().nullish(), size: z.number().nullish(), createdAt: time, url: text })),
  })
  .meta({ id: 'TaskInstance' });

const shards = z.looseObject({ total: z.number().int(), successful: z.number().int(), failed: z.number().int() });

/** Elasticsearch's search answer (`_search`, `search`). */
export const SearchReplyView = z
  .looseObject({
    took: z.number(),
    timed_out: z.boolean(),
    _shards: shards,
    hits: z.looseObject({
      total: z.looseObject({ value: z.number().int(), relation: z.enum(['eq', 'gte']) }),
      max_score: z.number().nullable(),
      hits: z.array(z.looseObject({ _index: text, _id: text, _score: z.number().nullable() })),
    }),
    aggregations: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'SearchReply' });

export const MultiSearchView = z.looseObject({ took: z.number(), responses: z.array(z.looseObject({})) }).meta({ id: 'MultiSearchReply' });
export const CountView = z.looseObject({ count: z.number().int(), _shards: shards }).meta({ id: 'CountReply' });
export const TermsEnumView = z.looseObject({ terms: z.array(z.string()), complete: z.boolean(), _shards: shards }).meta({ id: 'TermsEnumReply' });
export const MappingsView = z.record(z.string(), z.looseObject({ mappings: z.looseObject({ properties: z.record(z.string(), z.unknown()) }) })).meta({ id: 'Mappings' });

export const DatasetHookView = z
  .looseObject({
    id: text,
    url: text,
    active: z.boolean(),
    payloadFormat: z.enum(['JSON', 'formEncoded']),
    onEvents: z.looseObject({ graphImport: z.boolean().optional(), linkedDataUpload: z.boolean().optional(), fileUpload: z.boolean().optional() }),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'DatasetHook' });

export const HookDeliveryView = z
  .looseObject({ id: text, url: text, createdAt: time, updatedAt: time, statusCode: z.number().int().optional(), eventName: text, payloadFormat: text })
  .meta({ id: 'HookDelivery' });

export const GraphImportView = z
  .looseObject({
    dataset: z.looseObject({ ownerName: text, datasetName: text }),
    graphs: z.array(z.looseObject({ id: text, from: text, to: text, numberOfStatements: z.number().int() })),
  })
  .meta({ id: 'GraphImport' });

export const GraphqlStatusView = z.looseObject({ errors: z.array(z.string()).nullable() }).meta({ id: 'GraphqlStatus' });
