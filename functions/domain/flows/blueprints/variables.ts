/**
 * Variable references in task settings. A reference is `?name` where the `?` does not directly
 * follow a letter, digit, underscore or backslash: `https://x.org/data?format=csv` holds no
 * reference (a query string), `?dataset` and `graphs/?graph` do. Write `\?` for a literal `?`
 * where a reference would otherwise be read (`https://x.org/\?q=1`).
 *
 * SPARQL text is not scanned: its `?x` are SPARQL variables (see the catalogue).
 */

const REFERENCE = /(?<![\p{L}\p{N}_\\])\?([A-Za-z_][A-Za-z0-9_]*)/gu;
const ESCAPED_QUESTION_MARK = /\\\?/g;

/** The names referenced in `text`, in order of first appearance. */
export function findVariableReferences(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(REFERENCE)) names.add(m[1]!);
  return [...names];
}

/** True when the whole text (trimmed) is one reference, e.g. `?delay`. */
export function isSingleReference(text: string): boolean {
  const trimmed = text.trim();
  const refs = [...trimmed.matchAll(REFERENCE)];
  return refs.length === 1 && refs[0]![0] === trimmed;
}

/**
 * Replaces every reference with its value and `\?` with `?`. A reference to a name without a
 * value becomes the empty text (an unset variable), as the spec's "an empty value unsets".
 */
export function substituteReferences(text: string, values: Readonly<Record<string, string>>): string {
  // A short text referring many times to a long value would otherwise build a string of
  // gigabytes: the length is counted as the values go in, and the task fails past the limit.
  let length = text.length;
  const valueOf = (name: string): string => {
    const value = values[name] ?? '';
    length += value.length;
    if (length > MAX_SUBSTITUTED_CHARS) {
      throw new SubstitutionTooLongError(
        `A setting holds more than ${MAX_SUBSTITUTED_CHARS.toLocaleString('en-US')} characters once its variables are filled in (?${name} has ${value.length.toLocaleString('en-US')}); refer to long values fewer times.`,
      );
    }
    return value;
  };
  return text
    .split(ESCAPED_QUESTION_MARK)
    .map((part) => part.replace(REFERENCE, (_, name: string) => valueOf(name)))
    .join('?');
}

/** The longest a setting may become after substitution (a start value alone may be 1 MiB). */
export const MAX_SUBSTITUTED_CHARS = 2_000_000;

export class SubstitutionTooLongError extends Error {
  override name = 'SubstitutionTooLongError';
}

/** One task's record in the run document (`$.tasks.<id>` of the compiled state machine). */
export interface TaskRecord {
  status: string;
  output?: unknown;
  [key: string]: unknown;
}

/**
 * The variable values a task sees: the run's start values, then the outputs of the Set
 * variables tasks before it (`variableSources`, in dependency order, later ones win). The
 * compiler passes `variableSources` in each task's Parameters; masked and system values are
 * added by the task worker, which holds them outside the state machine.
 */
export function effectiveVariables(
  startValues: Readonly<Record<string, string>>,
  tasks: Readonly<Record<string, TaskRecord | undefined>>,
  variableSources: readonly string[],
): Record<string, string> {
  const values: Record<string, string> = { ...startValues };
  for (const source of variableSources) {
    const record = tasks[source];
    if (record?.status !== 'finished') continue;
    const set = (record.output as { variables?: unknown } | undefined)?.variables;
    if (!set || typeof set !== 'object') continue;
    for (const [name, value] of Object.entries(set)) {
      if (typeof value === 'string') values[name] = value;
    }
  }
  return values;
}
