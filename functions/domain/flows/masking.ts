/**
 * Hiding a run's secrets (its masked values and platform token) in everything a reader of the
 * run can see: log lines, outputs, errors, the run description, artifact names.
 */

export const MASK = '****';

export interface SecretMask {
  /** The text with every secret replaced by `****`. */
  text(text: string): string;
  /** A copy of a JSON-like value with every text (and key) masked. */
  value<T>(value: T): T;
  /** Length of the longest secret: text to be cut to N characters is read to N + this, then `cut`. */
  readonly longest: number;
  /**
   * The first `max` characters of `text`, masked, with no part of a secret left showing: a secret
   * straddling the cut is kept whole (then masked) before the masked text is cut.
   */
  cut(text: string, max: number): string;
}

/**
 * Longer secrets are replaced first, so a secret that holds a shorter one is never left half
 * shown. Values are masked text by text, never as serialized JSON: a secret with a quote or a
 * backslash in it would not match its own escaped form there.
 */
export function secretMask(secrets: Iterable<string>): SecretMask {
  const ordered = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  const text = (t: string) => (ordered.length === 0 ? t : ordered.reduce((acc, s) => (acc.includes(s) ? acc.split(s).join(MASK) : acc), t));
  const value = (v: unknown): unknown => {
    if (ordered.length === 0) return v;
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(value);
    // As JSON would: fields without a value are left out.
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).flatMap(([k, item]) => (item === undefined ? [] : [[text(k), value(item)]])));
    return v;
  };
  const cut = (t: string, max: number) => {
    // Extend the cut to the end of every secret that starts before it and ends after it; an
    // extension may bring another straddling secret, so repeat (at most once per secret).
    let end = Math.min(t.length, max);
    for (let round = 0, moved = true; moved && round <= ordered.length; round++) {
      moved = false;
      for (const s of ordered) {
        for (let i = t.indexOf(s, Math.max(0, end - s.length + 1)); i >= 0 && i < end; i = t.indexOf(s, i + 1)) {
          if (i + s.length > end) {
            end = i + s.length;
            moved = true;
          }
        }
      }
    }
    return text(t.slice(0, end)).slice(0, max);
  };
  return { text, value: value as <T>(v: T) => T, longest: ordered[0]?.length ?? 0, cut };
}
