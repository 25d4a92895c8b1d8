import type { Readable } from 'node:stream';
import type { AccessService } from '../datasets/access-service.js';
import type { AccountRecord } from '../accounts/accounts.js';
import type { AccessLevel } from '../datasets/datasets.js';
import { canReadDataset } from '../datasets/datasets.js';
import type { Caller } from '../shared/caller.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import { assertStoryName, bannerKey, MAX_STORY_ELEMENTS, STORIES_PREFIX, storiesOfOwner, storyIdKey, storyKey, type StoryElement, type StoryRecord } from './stories.js';

export type StoryElementInput = Omit<StoryElement, 'id'> & { id?: string };

export interface StoryInput {
  name?: string;
  displayName?: string;
  accessLevel?: AccessLevel;
  content?: StoryElementInput[];
}

/** Whether the caller may see the saved query of this id (stories only show queries their reader may see). */
export type QueryCheck = (caller: Caller | null, queryId: string) => Promise<boolean>;

export interface FoundStory {
  story: StoryRecord;
  owner: AccountRecord;
}

/** A story listing's bound: stories are blobs listed by prefix, so a listing reads at most this many. */
const MAX_LISTED = 2000;
export const MAX_BANNER_BYTES = 5 * 1024 * 1024;

async function readJson<T>(body: Readable | null): Promise<T | null> {
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

/**
 * Stories (TriplyDB's data stories): paragraphs and saved-query visualisations under an account,
 * stored as JSON blobs in the data bucket; access levels as datasets have them.
 */
export class StoryService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  private get blobs() {
    return this.platform.blobs.data;
  }

  private now() {
    return this.platform.clock.now().toISOString();
  }

  async canRead(caller: Caller | null, story: StoryRecord, owner: AccountRecord): Promise<boolean> {
    if (story.accessLevel !== 'private') return canReadDataset(story.accessLevel, caller !== null, false);
    return (await this.access.accountAccess(caller, owner)).isMember;
  }

  private async load(ownerUid: string, name: string): Promise<StoryRecord | null> {
    return readJson<StoryRecord>(await this.blobs.get(storyKey(ownerUid, name)));
  }

  private async save(story: StoryRecord): Promise<void> {
    await this.blobs.put(storyKey(story.ownerUid, story.name), JSON.stringify(story), { contentType: 'application/json' });
    await this.blobs.put(storyIdKey(story.id), JSON.stringify({ ownerUid: story.ownerUid, name: story.name }), { contentType: 'application/json' });
  }

  async get(caller: Caller | null, account: string, name: string): Promise<FoundStory> {
    const missing = () => new NotFoundError(`Story "${account}/${name}" does not exist.`);
    const owner = await this.platform.store.getAccountByName(account);
    if (!owner || !/^[a-zA-Z0-9-]{1,40}$/.test(name)) throw missing();
    const story = await this.load(owner.uid, name);
    if (!story || !(await this.canRead(caller, story, owner))) throw missing();
    return { story, owner };
  }

  /** A story by id, if the caller may see it (pinned items). */
  async byId(caller: Caller | null, id: string): Promise<FoundStory | null> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
    const at = await readJson<{ ownerUid: string; name: string }>(await this.blobs.get(storyIdKey(id)));
    if (!at) return null;
    const [story, owner] = await Promise.all([this.load(at.ownerUid, at.name), this.platform.store.getAccount(at.ownerUid)]);
    if (!story || story.id !== id || !owner || !(await this.canRead(caller, story, owner))) return null;
    return { story, owner };
  }

  private async writable(caller: Caller | null, account: string, name: string, what: string): Promise<FoundStory> {
    const found = await this.get(caller, account, name);
    await this.access.require(caller, found.owner, 'writeDatasets', what);
    return found;
  }

  private async content(caller: Caller | null, input: NonNullable<StoryInput['content']>, checkQuery: QueryCheck): Promise<StoryElement[]> {
    if (input.length > MAX_STORY_ELEMENTS) throw new ValidationError(`content: at most ${MAX_STORY_ELEMENTS} elements.`);
    const out: StoryElement[] = [];
    for (const [i, e] of input.entries()) {
      if (e.type === 'query') {
        if (!e.query) throw new ValidationError(`content[${i}].query: the id of a saved query is required.`);
        if (!(await checkQuery(caller, e.query))) throw new ValidationError(`content[${i}].query: no saved query "${e.query}" that you may see.`);
      } else if (typeof e.paragraph !== 'string') {
        throw new ValidationError(`content[${i}].paragraph: a paragraph element needs its text.`);
      }
      out.push({ ...e, id: e.id && /^[A-Za-z0-9_-]{1,64}$/.test(e.id) ? e.id : this.platform.ids.newId() });
    }
    return out;
  }

  async create(caller: Caller | null, account: string, input: StoryInput, checkQuery: QueryCheck): Promise<FoundStory> {
    const owner = await this.access.account(account);
    await this.access.require(caller, owner, 'writeDatasets', 'create stories');
    const name = assertStoryName(input.name);
    if (await this.load(owner.uid, name)) throw new ConflictError(`A story named "${name}" already exists in this account.`);
    const now = this.now();
    const story: StoryRecord = {
      id: this.platform.ids.newId(),
      ownerUid: owner.uid,
      name,
      displayName: input.displayName,
      accessLevel: input.accessLevel ?? 'private',
      content: await this.content(caller, input.content ?? [], checkQuery),
      createdAt: now,
      updatedAt: now,
    };
    await this.save(story);
    return { story, owner };
  }

  async update(caller: Caller | null, account: string, name: string, patch: StoryInput, checkQuery: QueryCheck): Promise<FoundStory> {
    const { story, owner } = await this.writable(caller, account, name, 'change stories');
    const next: StoryRecord = { ...story, updatedAt: this.now() };
    if (patch.displayName !== undefined) next.displayName = patch.displayName;
    if (patch.accessLevel !== undefined) next.accessLevel = patch.accessLevel;
    if (patch.content !== undefined) next.content = await this.content(caller, patch.content, checkQuery);
    if (patch.name !== undefined && patch.name !== story.name) {
      next.name = assertStoryName(patch.name);
      if (patch.name.toLowerCase() !== story.name.toLowerCase() && (await this.load(owner.uid, patch.name))) {
        throw new ConflictError(`A story named "${patch.name}" already exists in this account.`);
      }
      await this.save(next);
      if (patch.name.toLowerCase() !== story.name.toLowerCase()) await this.blobs.delete(storyKey(owner.uid, story.name));
      return { story: next, owner };
    }
    await this.save(next);
    return { story: next, owner };
  }

  async delete(caller: Caller | null, account: string, name: string): Promise<void> {
    const { story } = await this.writable(caller, account, name, 'delete stories');
    await this.blobs.delete(storyKey(story.ownerUid, story.name));
    await this.blobs.delete(storyIdKey(story.id));
    await this.blobs.delete(bannerKey(story));
  }

  /** Copies (a new id) or moves (`chown`: the same id) a story to an account the caller may write to. */
  async transfer(caller: Caller | null, account: string, name: string, toAccount: string, mode: 'copy' | 'chown'): Promise<FoundStory> {
    const found = mode === 'copy' ? await this.get(caller, account, name) : await this.writable(caller, account, name, 'move stories');
    const target = await this.access.account(toAccount);
    await this.access.require(caller, target, 'writeDatasets', `${mode === 'copy' ? 'copy' : 'move'} stories to "${toAccount}"`);
    if (target.uid === found.owner.uid && mode === 'chown') return found;
    if (await this.load(target.uid, found.story.name)) throw new ConflictError(`"${toAccount}" already has a story named "${found.story.name}".`);
    const now = this.now();
    const moved: StoryRecord = { ...found.story, ownerUid: target.uid, updatedAt: now, ...(mode === 'copy' ? { id: this.platform.ids.newId(), createdAt: now } : {}) };
    const banner = found.story.bannerVersion ? await this.blobs.get(bannerKey(found.story)) : null;
    if (banner) await this.blobs.put(bannerKey(moved), banner);
    await this.save(moved);
    if (mode === 'chown') {
      await this.blobs.delete(storyKey(found.owner.uid, found.story.name));
      if (banner) await this.blobs.delete(bannerKey(found.story));
    }
    return { story: moved, owner: target };
  }

  async setBanner(caller: Caller | null, account: string, name: string, bytes: Buffer, contentType: string): Promise<FoundStory> {
    const { story, owner } = await this.writable(caller, account, name, 'change stories');
    await this.blobs.put(bannerKey(story), bytes, { contentType });
    const next = { ...story, bannerVersion: (story.bannerVersion ?? 0) + 1, updatedAt: this.now() };
    await this.save(next);
    return { story: next, owner };
  }

  async banner(caller: Caller | null, account: string, name: string): Promise<{ body: Readable; contentType: string }> {
    const { story } = await this.get(caller, account, name);
    const info = story.bannerVersion ? await this.blobs.head(bannerKey(story)) : null;
    const body = info ? await this.blobs.get(bannerKey(story)) : null;
    if (!info || !body) throw new NotFoundError(`Story "${account}/${name}" has no banner.`);
    return { body, contentType: info.contentType ?? 'application/octet-stream' };
  }

  /** Stories the caller may see, of one account or all, by name; `q` matches name or display name. */
  async list(caller: Caller | null, account: string | null, options: { limit: number; offset: number; q?: string }): Promise<FoundStory[]> {
    const owner = account === null ? null : await this.access.account(account);
    const owners = new Map<string, Promise<AccountRecord | null>>();
    const ownerOf = (uid: string) => owners.get(uid) ?? owners.set(uid, this.platform.store.getAccount(uid)).get(uid)!;
    const out: FoundStory[] = [];
    let seen = 0;
    let skipped = 0;
    const q = options.q?.toLowerCase();
    for await (const blob of this.blobs.list(owner ? storiesOfOwner(owner.uid) : STORIES_PREFIX)) {
      if (++seen > MAX_LISTED || out.length >= options.limit) break;
      if (!blob.key.endsWith('.json')) continue;
      const story = await readJson<StoryRecord>(await this.blobs.get(blob.key));
      const storyOwner = story && (await ownerOf(story.ownerUid));
      if (!story || !storyOwner || !(await this.canRead(caller, story, storyOwner))) continue;
      if (q && !story.name.toLowerCase().includes(q) && !(story.displayName ?? '').toLowerCase().includes(q)) continue;
      if (skipped++ < options.offset) continue;
      out.push({ story, owner: storyOwner });
    }
    return out;
  }

  /** Removes the stories of an account that is being deleted. Bounded. */
  async removeAllOf(ownerUid: string): Promise<void> {
    let n = 0;
    for await (const blob of this.blobs.list(storiesOfOwner(ownerUid))) {
      if (++n > MAX_LISTED) break;
      await this.blobs.delete(blob.key);
    }
  }
}
