/**
 * House rules the dependency checker cannot see (issue 12): source files stay small enough to
 * read, and every domain context says what it owns.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_LINES = 500;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts') ? [path] : [];
  });
}

describe('the house', () => {
  it(`keeps every source file under functions/ at ${MAX_LINES} lines or fewer`, () => {
    const files = sources(join(ROOT, 'functions'));
    expect(files.length).toBeGreaterThan(100);
    const tooLong = files
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_LINES);
    expect(tooLong).toEqual([]);
  });

  it('gives every domain context a README saying what it owns', () => {
    const domain = join(ROOT, 'functions', 'domain');
    const contexts = readdirSync(domain).filter((name) => statSync(join(domain, name)).isDirectory());
    expect(contexts).toEqual(expect.arrayContaining(['shared', 'accounts', 'datasets', 'data', 'sparql', 'queries', 'flows']));
    const missing = contexts.filter((c) => !readdirSync(join(domain, c)).includes('README.md'));
    expect(missing).toEqual([]);
  });
});
