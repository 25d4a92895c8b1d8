/**
 * Reading a task's settings on save: `SettingsReader` records every problem (and never stops at
 * the first), reports settings it does not know, and scans every accepted text for variable
 * references, except text that is SPARQL or a regex. Also the setting shapes several task types
 * share (a dataset reference, an http(s) URL).
 */
import { charLength } from '../limits.js';
import { childPath, type FlowProblemCode } from '../blueprints/problems.js';
import { findVariableReferences, isSingleReference } from '../blueprints/variables.js';

/** What a settings check may ask about the rest of the flow. */
export interface CheckContext {
  problem(path: string, code: FlowProblemCode, message: string): void;
  /** Called for every text that may hold `?name` references. */
  references(path: string, text: string): void;
  /** A name defined as flow, output, masked or system variable. */
  isDefinedVariable(name: string): boolean;
  isFlowVariable(name: string): boolean;
  isOutputVariable(name: string): boolean;
  /** Tasks this task is connected to (its outgoing connections). */
  successors: readonly string[];
  taskIds: ReadonlySet<string>;
  timeoutSeconds?: number;
  /** `tasks[i]`, for problems about the task rather than one setting. */
  taskPath: string;
  /** The task's id, when it has a valid one (messages name it). */
  taskId?: string;
}

type TextOptions = { required?: boolean; max?: number; what?: string; references?: boolean };

/** Reads one settings object, recording problems in the context. */
export class SettingsReader {
  private readonly seen = new Set<string>();

  constructor(
    readonly value: Record<string, unknown>,
    readonly path: string,
    private readonly ctx: CheckContext,
  ) {}

  has(key: string): boolean {
    return this.value[key] !== undefined;
  }

  at(key: string): string {
    return childPath(this.path, key);
  }

  private take(key: string, required: boolean | undefined, expected: string): unknown {
    this.seen.add(key);
    const v = this.value[key];
    if (v === undefined || v === null) {
      if (required) this.ctx.problem(this.at(key), 'invalid', `Required: give ${expected}.`);
      return undefined;
    }
    return v;
  }

  text(key: string, options: TextOptions = {}): string | undefined {
    const v = this.take(key, options.required, options.what ?? 'a text');
    if (v === undefined) return undefined;
    return this.checkText(this.at(key), v, options);
  }

  private checkText(path: string, v: unknown, options: TextOptions): string | undefined {
    if (typeof v !== 'string') {
      this.ctx.problem(path, 'invalid', `Expected ${options.what ?? 'a text'}, got ${kindOf(v)}.`);
      return undefined;
    }
    if (options.required && v.trim() === '') {
      this.ctx.problem(path, 'invalid', `Required: give ${options.what ?? 'a text'}; it is empty.`);
    }
    if (options.max !== undefined && charLength(v) > options.max) {
      this.ctx.problem(
        path,
        'too-long',
        `At most ${options.max.toLocaleString('en-US')} characters; this has ${charLength(v).toLocaleString('en-US')}.`,
      );
    }
    if (options.references !== false) this.ctx.references(path, v);
    return v;
  }

  /** One of `options`; with `allowReference`, also a text that is a single `?name`. */
  choice<T extends string>(
    key: string,
    options: readonly T[],
    settings: { required?: boolean; allowReference?: boolean } = {},
  ): T | undefined {
    const expected = `one of ${options.join(', ')}`;
    const v = this.take(key, settings.required, expected);
    if (v === undefined) return undefined;
    if (typeof v === 'string' && options.includes(v as T)) return v as T;
    if (settings.allowReference && typeof v === 'string' && isSingleReference(v)) {
      this.ctx.references(this.at(key), v);
      return undefined;
    }
    this.ctx.problem(this.at(key), 'invalid', `Expected ${expected}${settings.allowReference ? ' (or a ?variable)' : ''}, got ${shown(v)}.`);
    return undefined;
  }

  flag(key: string): boolean | undefined {
    const v = this.take(key, false, 'true or false');
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') {
      this.ctx.problem(this.at(key), 'invalid', `Expected true or false, got ${kindOf(v)}.`);
      return undefined;
    }
    return v;
  }

  integer(key: string, range: { min: number; max: number; required?: boolean }): number | undefined {
    const v = this.take(key, range.required, 'a whole number');
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < range.min || v > range.max) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a whole number from ${range.min} to ${range.max}, got ${shown(v)}.`);
      return undefined;
    }
    return v;
  }

  /** A list of texts. */
  texts(key: string, options: TextOptions = {}): string[] | undefined {
    const v = this.take(key, options.required, `a list of ${options.what ?? 'texts'}`);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a list of ${options.what ?? 'texts'}, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      const t = this.checkText(childPath(this.at(key), i), item, { ...options, required: true });
      if (t !== undefined) out.push(t);
    });
    return out;
  }

  /** An object of name → text (HTTP headers, variable values). */
  textMap(key: string, options: TextOptions = {}): Record<string, string> | undefined {
    const v = this.take(key, options.required, 'an object of names to texts');
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected an object of names to texts, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [name, item] of Object.entries(v)) {
      const t = this.checkText(childPath(this.at(key), name), item, options);
      if (t !== undefined) out[name] = t;
    }
    return out;
  }

  object(key: string, options: { required?: boolean; what?: string } = {}): SettingsReader | undefined {
    const v = this.take(key, options.required, options.what ?? 'an object');
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected ${options.what ?? 'an object'}, got ${kindOf(v)}.`);
      return undefined;
    }
    return new SettingsReader(v, this.at(key), this.ctx);
  }

  /** A list of objects. */
  objects(key: string, options: { required?: boolean; what?: string } = {}): SettingsReader[] | undefined {
    const v = this.take(key, options.required, `a list of ${options.what ?? 'objects'}`);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a list of ${options.what ?? 'objects'}, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: SettingsReader[] = [];
    v.forEach((item, i) => {
      const path = childPath(this.at(key), i);
      if (!isPlainObject(item)) this.ctx.problem(path, 'invalid', `Expected ${options.what ?? 'an object'}, got ${kindOf(item)}.`);
      else out.push(new SettingsReader(item, path, this.ctx));
    });
    return out;
  }

  /** Reports every key no check read. Call last. */
  finish(): void {
    for (const key of Object.keys(this.value)) {
      if (!this.seen.has(key)) {
        this.ctx.problem(this.at(key), 'unknown-setting', `Unknown setting "${key}"; remove it or check its spelling.`);
      }
    }
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value for a message: a scalar as written (long texts cut), anything else by its kind (never walked). */
export function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return kindOf(v);
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a text';
  return `a ${typeof v}`;
}

/** Whether a text holds a `?name` reference (its value is only known when the task runs). */
export function hasReference(text: string): boolean {
  return findVariableReferences(text).length > 0;
}

// ---- Shared setting shapes ----

/** `{ "account": …, "dataset": … }`: a dataset, by owner and name (either may be a ?variable). */
export function datasetRef(s: SettingsReader, key: string, required: boolean): void {
  const ref = s.object(key, { required, what: 'a dataset ({ "account": …, "dataset": … })' });
  if (!ref) return;
  ref.text('account', { required: true, what: 'the account owning the dataset' });
  ref.text('dataset', { required: true, what: 'the dataset name' });
  ref.finish();
}

/** An http(s) URL (not checked when it holds a ?variable). */
export function httpUrl(s: SettingsReader, key: string, ctx: CheckContext, required = true): void {
  const url = s.text(key, { required, what: 'a URL' });
  if (url === undefined || url.trim() === '' || hasReference(url)) return;
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    ok = false;
  }
  if (!ok) ctx.problem(s.at(key), 'invalid', `"${url}" is not an http(s) URL.`);
}
