import { ValidationError } from '../shared/errors.js';

/**
 * The `language` argument of language-string fields, in HTTP Accept-Language syntax
 * (`"nl, en;q=.5"`, RFC 9110 §12.5.4): the values whose language matches a range (basic filtering
 * of RFC 4647: equal, or a prefix ending at a `-`; `*` matches any), ordered by the range's
 * weight, best first; ranges of weight 0 are left out.
 */
export interface LanguageRange {
  range: string;
  q: number;
}

const RANGE = /^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)$/;
const WEIGHT = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?|\.\d{1,3})$/i;

export function parseLanguagePreference(text: string): LanguageRange[] {
  const ranges: LanguageRange[] = [];
  for (const part of text.split(',')) {
    const [rawRange, ...params] = part.split(';').map((s) => s.trim());
    if (!rawRange) continue;
    if (!RANGE.test(rawRange)) throw new ValidationError(`language: "${rawRange.slice(0, 40)}" is not a language range (e.g. "en", "en-GB" or "*").`);
    let q = 1;
    for (const param of params) {
      if (!WEIGHT.test(param)) throw new ValidationError(`language: "${param.slice(0, 40)}" is not a weight (write q=0.5).`);
      q = Number(param.slice(2));
    }
    ranges.push({ range: rawRange.toLowerCase(), q });
  }
  if (ranges.length === 0) throw new ValidationError('language: give at least one language, e.g. "en" or "nl, en;q=0.5".');
  return ranges;
}

const matches = (range: string, language: string): boolean => range === '*' || language === range || language.startsWith(`${range}-`);

/**
 * The values in preference order: each value gets the weight of the best range it matches
 * (an exact or longer range beats `*`), values no range accepts are left out.
 */
export function byPreference<T extends { language: string | null }>(values: T[], ranges: LanguageRange[]): T[] {
  const scored: { value: T; q: number; specific: number; index: number }[] = [];
  values.forEach((value, index) => {
    const language = (value.language ?? '').toLowerCase();
    let best: { q: number; specific: number } | null = null;
    for (const r of ranges) {
      if (!language && r.range !== '*') continue;
      if (!matches(r.range, language)) continue;
      const specific = r.range === '*' ? 0 : r.range.length;
      if (!best || specific > best.specific) best = { q: r.q, specific };
    }
    if (best && best.q > 0) scored.push({ value, ...best, index });
  });
  return scored.sort((a, b) => b.q - a.q || a.index - b.index).map((s) => s.value);
}
