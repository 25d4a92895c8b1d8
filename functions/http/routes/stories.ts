import { z } from 'zod';
import { accountAvatarKey } from '../../domain/accounts/accounts.js';
import { ACCESS_LEVELS } from '../../domain/datasets/datasets.js';
import { NotFoundError, ValidationError } from '../../domain/shared/errors.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../domain/shared/paging.js';
import { MAX_BANNER_BYTES, type QueryCheck } from '../../domain/stories/story-service.js';
import type { Operations, OperationContext } from '../api.js';
import { jsonResponse } from '../errors.js';
import { imageFromMultipart } from '../multipart-file.js';
import { allowQueryParams, withoutQueryParams } from '../query-params.js';
import { listOrder, MAX_SORTED, offsetParam, sortedPage } from '../list-order.js';

const STORY_SORT = ['name'] as const;
import { parseJsonBody, singleQueryParam } from '../request.js';
import { fullStoryView, queryViewById, storiesOf } from './showcase.js';

const element = z.object({
  id: z.string().max(64).optional(),
  type: z.enum(['paragraph', 'query'], 'must be "paragraph" or "query"'),
  paragraph: z.string().max(100_000).optional(),
  query: z.string().max(64).optional(),
  queryVersion: z.number().int().min(1).optional(),
  caption: z.string().max(1000).optional(),
  width: z.enum(['fullWidth', 'default']).optional(),
  height: z.enum(['small', 'medium', 'large']).optional(),
});
export const StoryBody = z.object({
  name: z.string('is required').max(40, 'at most 40 characters'),
  displayName: z.string().max(256).optional(),
  accessLevel: z.enum(ACCESS_LEVELS, 'must be "public", "internal" or "private"').optional(),
  content: z.array(element).max(200).optional(),
});
export const StoryPatch = StoryBody.partial();
export const ToAccountBody = z.object({ toAccount: z.string('is required').max(40, 'an account name has at most 40 characters') });

const MAX_AVATAR_BYTES = 2 * 1024 * 1024;

/**
 * Avatars in the data bucket, under `datasets/` where every data bucket grant is held: a dataset's
 * beside its data (it goes with it), an account's under `datasets/_avatars/` (no dataset id starts with `_`).
 */
const avatarKey = (kind: 'a' | 'd', id: string) => (kind === 'd' ? `datasets/${id}/avatar` : accountAvatarKey(id));

const queryCheck = (ctx: OperationContext): QueryCheck => async (caller, id) => (await queryViewById(ctx.services, caller, id, ctx.apiUrl)) !== null;

function listOptions(ctx: OperationContext) {
  // Stories come by owner and name. TriplyDB's `since` (a cursor) is an offset here, as `offset` is;
  // `sortBy` (only "name", account listings only) and `sortDirection` sort (http/list-order.ts).
  allowQueryParams(ctx.req, ctx.params.account ? ['limit', 'offset', 'q', 'since', 'sortBy', 'sortDirection'] : ['limit', 'offset', 'q', 'since', 'sortDirection']);
  const limitRaw = singleQueryParam(ctx.req, 'limit');
  const limit = limitRaw === null ? DEFAULT_PAGE_SIZE : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new ValidationError(`limit: must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
  const offsetGiven = offsetParam(ctx.req);
  const since = offsetParam(ctx.req, 'since');
  if (offsetGiven !== null && since !== null) throw new ValidationError('since: give either since or offset (the same position), not both.');
  const offset = offsetGiven ?? since ?? 0;
  const order = listOrder(ctx.req, STORY_SORT, 'name');
  return { limit, offset, q: singleQueryParam(ctx.req, 'q') ?? undefined, order: order && { ...order, offset }, cursor: (since !== null ? 'since' : 'offset') as 'since' | 'offset' };
}

async function list(ctx: OperationContext, account: string | null) {
  const options = listOptions(ctx);
  let stories;
  let more: boolean;
  if (options.order) {
    const all = await storiesOf(ctx.services).list(ctx.caller, account, { limit: MAX_SORTED, offset: 0, q: options.q });
    const key = (s: (typeof all)[number]) => (account === null && !ctx.req.query.has('sortBy') ? `${s.owner.accountName}/${s.story.name}` : s.story.name);
    const sorted = sortedPage(all, key, options.order, options.limit);
    stories = sorted.items;
    more = sorted.more;
  } else {
    stories = await storiesOf(ctx.services).list(ctx.caller, account, options);
    // A full page may have a next one (the TriplyDB client follows `Link: rel="next"`, absolute).
    more = stories.length === options.limit;
  }
  const next = new URLSearchParams(ctx.req.query);
  next.set(options.cursor, String(options.offset + options.limit));
  const link = more ? { link: `<${ctx.apiUrl}${ctx.req.path}?${next.toString()}>; rel="next"` } : undefined;
  return jsonResponse(200, await Promise.all(stories.map((s) => fullStoryView(ctx.services, ctx.caller, s.story, s.owner, ctx.apiUrl))), link);
}

const operations: Operations = {
  listAllStories: (ctx) => list(ctx, null),
  listAccountStories: (ctx) => list(ctx, ctx.params.account!),

  async createStory(ctx) {
    const body = parseJsonBody(ctx.req, StoryBody);
    const { story, owner } = await storiesOf(ctx.services).create(ctx.caller, ctx.params.account!, body, queryCheck(ctx));
    return jsonResponse(201, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async getStory(ctx) {
    allowQueryParams(ctx.req, ['verbose']);
    const { story, owner } = await storiesOf(ctx.services).get(ctx.caller, ctx.params.account!, ctx.params.story!);
    return jsonResponse(200, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async updateStory(ctx) {
    const body = parseJsonBody(ctx.req, StoryPatch);
    const { story, owner } = await storiesOf(ctx.services).update(ctx.caller, ctx.params.account!, ctx.params.story!, body, queryCheck(ctx));
    return jsonResponse(200, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async deleteStory(ctx) {
    await storiesOf(ctx.services).delete(ctx.caller, ctx.params.account!, ctx.params.story!);
    return { status: 204, headers: {} };
  },

  async copyStory(ctx) {
    const body = parseJsonBody(ctx.req, ToAccountBody);
    const { story, owner } = await storiesOf(ctx.services).transfer(ctx.caller, ctx.params.account!, ctx.params.story!, body.toAccount, 'copy');
    return jsonResponse(201, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async chownStory(ctx) {
    const body = parseJsonBody(ctx.req, ToAccountBody);
    const { story, owner } = await storiesOf(ctx.services).transfer(ctx.caller, ctx.params.account!, ctx.params.story!, body.toAccount, 'chown');
    return jsonResponse(200, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async uploadStoryBanner(ctx) {
    const image = await imageFromMultipart(ctx.req, 'banner', MAX_BANNER_BYTES);
    const { story, owner } = await storiesOf(ctx.services).setBanner(ctx.caller, ctx.params.account!, ctx.params.story!, image.bytes, image.contentType);
    return jsonResponse(200, await fullStoryView(ctx.services, ctx.caller, story, owner, ctx.apiUrl));
  },

  async getStoryBanner(ctx) {
    allowQueryParams(ctx.req, ['v', 'w', 'h']);
    const { body, contentType } = await storiesOf(ctx.services).banner(ctx.caller, ctx.params.account!, ctx.params.story!);
    return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'private, max-age=60' }, body };
  },

  /** `POST /imgs/avatars/a/{uid}`: an account's avatar (field `avatar`), by whoever may manage the account. */
  async setAccountAvatar(ctx) {
    const { store, blobs, clock } = ctx.services.platform;
    const account = /^[A-Za-z0-9_-]{1,64}$/.test(ctx.params.id!) ? await store.getAccount(ctx.params.id!) : null;
    if (!account) throw new NotFoundError(`Account "${ctx.params.id}" does not exist.`);
    await ctx.services.access.require(ctx.caller, account, 'manageAccount', 'change the avatar');
    const image = await imageFromMultipart(ctx.req, 'avatar', MAX_AVATAR_BYTES);
    await blobs.data.put(avatarKey('a', account.uid), image.bytes, { contentType: image.contentType });
    const now = clock.now().toISOString();
    await store.replaceAccount({ ...account, avatarUpdatedAt: now, updatedAt: now }, account.updatedAt);
    return jsonResponse(200, { avatarUrl: `${ctx.apiUrl}/imgs/avatars/a/${account.uid}?v=${Date.parse(now)}` });
  },

  /** `POST /imgs/avatars/d/{datasetId}`: a dataset's avatar, by whoever may change the dataset. */
  async setDatasetAvatar(ctx) {
    const { store, blobs, clock } = ctx.services.platform;
    const dataset = /^[A-Za-z0-9_-]{1,64}$/.test(ctx.params.id!) ? await store.getDatasetById(ctx.params.id!) : null;
    const owner = dataset && (await store.getAccount(dataset.ownerUid));
    if (!dataset || !owner || !(await ctx.services.access.canReadDataset(ctx.caller, dataset, owner))) throw new NotFoundError(`Dataset "${ctx.params.id}" does not exist.`);
    await ctx.services.access.require(ctx.caller, owner, 'writeDatasets', 'change the avatar');
    const image = await imageFromMultipart(ctx.req, 'avatar', MAX_AVATAR_BYTES);
    await blobs.data.put(avatarKey('d', dataset.id), image.bytes, { contentType: image.contentType });
    const now = clock.now().toISOString();
    await store.updateDataset({ ...dataset, avatarUpdatedAt: now, updatedAt: now, revision: dataset.revision + 1 });
    return jsonResponse(200, { avatarUrl: `${ctx.apiUrl}/imgs/avatars/d/${dataset.id}?v=${Date.parse(now)}` });
  },

  /** Avatars are as visible as what they belong to. */
  async getAvatar(ctx) {
    allowQueryParams(ctx.req, ['v', 'w', 'h']);
    const { store, blobs } = ctx.services.platform;
    const kind = ctx.params.kind;
    const id = ctx.params.id!;
    const missing = new NotFoundError('This avatar does not exist.');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id) || (kind !== 'a' && kind !== 'd')) throw missing;
    if (kind === 'd') {
      const dataset = await store.getDatasetById(id);
      const owner = dataset && (await store.getAccount(dataset.ownerUid));
      if (!dataset || !owner || !(await ctx.services.access.canReadDataset(ctx.caller, dataset, owner))) throw missing;
    } else if (!(await store.getAccount(id))) throw missing;
    const key = avatarKey(kind, id);
    const info = await blobs.data.head(key);
    const body = info && (await blobs.data.get(key));
    if (!info || !body) throw missing;
    return { status: 200, headers: { 'content-type': info.contentType ?? 'application/octet-stream', 'cache-control': 'private, max-age=60' }, body };
  },
};

/** Writes take no query parameters. */
export const storyOperations: Operations = withoutQueryParams(operations, ['createStory', 'updateStory', 'deleteStory', 'copyStory', 'chownStory', 'uploadStoryBanner', 'setAccountAvatar', 'setDatasetAvatar']);
