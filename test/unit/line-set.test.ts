import { describe, expect, it } from 'vitest';
import { LineSet } from '../../functions/domain/data/line-set.js';

describe('LineSet', () => {
  it('tells new lines from seen ones across growth', () => {
    const set = new LineSet(16);
    for (let i = 0; i < 50_000; i++) expect(set.add(`<https://e/s${i}> <https://e/p> "${i}" .`)).toBe(true);
    for (let i = 0; i < 50_000; i += 997) expect(set.add(`<https://e/s${i}> <https://e/p> "${i}" .`)).toBe(false);
    expect(set.size).toBe(50_000);
  });

  it('keeps lines apart that differ only in length or order', () => {
    const set = new LineSet();
    expect(set.add('ab')).toBe(true);
    expect(set.add('ba')).toBe(true);
    expect(set.add('ab ')).toBe(true);
    expect(set.add('')).toBe(true);
    expect(set.add('')).toBe(false);
    expect(set.size).toBe(4);
  });
});
