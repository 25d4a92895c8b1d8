/**
 * Zod schemas of the JSON views the routes answer with, for the OpenAPI document
 * (functions/http/openapi/generator.ts). They follow the view functions' shapes (accountView,
 * datasetView, jobView, graphView, assetView, serviceView, savedQueryView, tokenView,
 * membershipView): the fields always present are required, the rest optional, and every object
 * is open (`looseObject`): a field added to a view does not break the document.
 */
import { z } from 'zod';

const text = z.string();
const optionalText = z.string().nullish();
const time = z.string();

export const ErrorView = z.object({ message: z.string() }).loose().meta({ id: 'Error' });

export const AccountView = z
  .looseObject({
    type: z.enum(['user', 'org']),
    accountType: z.enum(['user', 'group']),
    uid: text,
    accountName: text,
    name: optionalText,
    description: optionalText,
    createdAt: time,
    updatedAt: time,
    pinnedItems: z.array(z.unknown()),
    role: z.string().optional(),
    email: z.string().nullish(),
  })
  .meta({ id: 'Account' });

const prefix = z.looseObject({ prefixLabel: text, iri: text });

export const DatasetView = z
  .looseObject({
    id: text,
    name: text,
    displayName: optionalText,
    description: optionalText,
    owner: AccountView,
    accessLevel: z.enum(['public', 'internal', 'private']),
    license: optionalText,
    createdAt: time,
    updatedAt: time,
    graphCount: z.number().int(),
    statements: z.number().int(),
    serviceCount: z.number().int(),
    assetCount: z.number().int(),
    prefixes: z.array(prefix),
  })
  .meta({ id: 'Dataset' });

export const JobView = z
  .looseObject({
    jobId: text,
    status: z.enum(['created', 'downloading', 'pending', 'indexing', 'finished', 'canceled', 'error']),
    type: z.string().optional(),
    datasetId: optionalText,
    jobUrl: text,
    files: z.array(z.looseObject({ fileName: optionalText, fileSize: z.number().nullish(), sourceFileId: text })),
    createdAt: time,
    updatedAt: time,
    indexedGraphCount: z.number().int(),
    indexingProgress: z.number().min(0).max(1),
    downloadingProgress: z.number().min(0).max(1),
    downloadedBytes: z.number(),
  })
  .meta({ id: 'IndexJob' });

export const GraphView = z
  .looseObject({ id: text, graphName: text, numberOfStatements: z.number().int(), importedAt: time.nullish(), uploadedAt: time.nullish() })
  .meta({ id: 'Graph' });

export const AssetView = z
  .looseObject({
    assetName: text,
    identifier: text,
    createdAt: time,
    updatedAt: time,
    url: text,
    fileSize: z.number().nullish(),
    versions: z.array(z.looseObject({ id: text, uploadedAt: time, url: text, fileSize: z.number().nullish() })),
  })
  .meta({ id: 'Asset' });

export const ServiceView = z
  .looseObject({
    id: text,
    name: text,
    type: text,
    status: text,
    outOfSync: z.boolean(),
    endpoint: text,
    capabilities: z.array(text),
    numberOfLoadedStatements: z.number().int(),
    numberOfGraphs: z.number().int(),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'Service' });

export const QueryView = z
  .looseObject({
    id: text,
    name: text,
    displayName: optionalText,
    description: optionalText,
    accessLevel: z.enum(['public', 'internal', 'private']),
    owner: AccountView,
    link: text,
    version: z.number().int(),
    numberOfVersions: z.number().int(),
    requestConfig: z.looseObject({ payload: z.looseObject({ query: text }) }),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'Query' });

export const TokenView = z
  .looseObject({ tokenId: text, description: z.string(), readOnly: z.boolean(), scopes: z.record(z.string(), z.string()), createdAt: time, token: z.string().optional() })
  .meta({ id: 'Token' });

export const MembershipView = z.looseObject({ role: text, user: AccountView, createdAt: time.nullish(), updatedAt: time.nullish() }).meta({ id: 'Member' });

export const RoleView = z.looseObject({ name: text, permissions: z.array(text) }).meta({ id: 'Role' });

export const InfoView = z
  .looseObject({ apiUrl: text, consoleUrl: text, version: text, featureToggles: z.record(z.string(), z.unknown()), enabledServices: z.unknown() })
  .meta({ id: 'Info' });

/** A graph as a service has loaded it (`GET …/services/{service}/graphs`). */
export const ServiceGraphView = z
  .looseObject({ graphName: text, status: z.enum(['loaded', 'loading', 'error', 'notLoaded']), statements: z.number().int().optional() })
  .meta({ id: 'ServiceGraph' });

export const PrefixView = z.looseObject({ prefixLabel: text, iri: text, scope: z.enum(['local', 'global']).optional() }).meta({ id: 'Prefix' });

export const StoryView = z
  .looseObject({ id: text, name: text, accessLevel: z.enum(['public', 'internal', 'private']), owner: AccountView, content: z.array(z.looseObject({ type: z.enum(['paragraph', 'query']) })) })
  .meta({ id: 'Story' });

const term = z.looseObject({ termType: text, value: text });
/** `GET …/statements`: each statement as its three or four terms. */
export const StatementView = z.array(term).min(3).max(4).meta({ id: 'Statement' });

/** JSON arrays of a view. */
export const listOf = (item: z.ZodType) => z.array(item);
