import type { AccountRecord } from '../accounts/accounts.js';
import { accountView } from '../accounts/accounts.js';
import type { AccessLevel } from '../datasets/datasets.js';
import { ValidationError } from '../shared/errors.js';

/** One block of a story: Markdown text, or a saved query's visualisation (by the query's id). */
export interface StoryElement {
  id: string;
  type: 'paragraph' | 'query';
  paragraph?: string;
  query?: string;
  queryVersion?: number;
  caption?: string;
  width?: 'fullWidth' | 'default';
  height?: 'small' | 'medium' | 'large';
}

/**
 * A story as stored: a JSON blob `datasets/_stories/<ownerUid>/<name lower-cased>.json` in the data
 * bucket (every data bucket grant is held to keys under `datasets/`; no dataset id starts with `_`).
 */
export interface StoryRecord {
  id: string;
  ownerUid: string;
  name: string;
  displayName?: string;
  accessLevel: AccessLevel;
  content: StoryElement[];
  /** Counts banner uploads; the banner blob is `datasets/_stories/<ownerUid>/<id>.banner`. */
  bannerVersion?: number;
  createdAt: string;
  updatedAt: string;
}

export const MAX_STORY_ELEMENTS = 200;
const STORY_NAME = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,39}$/;

export function assertStoryName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !STORY_NAME.test(name)) {
    throw new ValidationError(`${field}: a story name has 1 to 40 letters, digits or hyphens and starts with a letter or digit.`);
  }
  return name;
}

export const STORIES_PREFIX = 'datasets/_stories/';
export const storiesOfOwner = (ownerUid: string) => `${STORIES_PREFIX}${ownerUid}/`;
export const storyKey = (ownerUid: string, name: string) => `${storiesOfOwner(ownerUid)}${name.toLowerCase()}.json`;
export const storyIdKey = (id: string) => `datasets/_story-ids/${id}.json`;
export const bannerKey = (s: Pick<StoryRecord, 'ownerUid' | 'id'>) => `${storiesOfOwner(s.ownerUid)}${s.id}.banner`;

/** The public JSON of a story; `queries` holds the views of the queries its elements show (those the caller may see). */
export function storyView(
  s: StoryRecord,
  owner: AccountRecord,
  apiUrl: string,
  queries: Map<string, Record<string, unknown>>,
): Record<string, unknown> {
  const base = `${apiUrl}/stories/${encodeURIComponent(owner.accountName)}/${encodeURIComponent(s.name)}`;
  return {
    id: s.id,
    name: s.name,
    displayName: s.displayName,
    owner: accountView(owner),
    accessLevel: s.accessLevel,
    link: base,
    content: s.content.map((e) => (e.type === 'query' ? { ...e, query: e.query ? queries.get(e.query) : undefined } : e)),
    bannerUrl: s.bannerVersion ? `${base}/banner.webp?v=${s.bannerVersion}` : undefined,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
