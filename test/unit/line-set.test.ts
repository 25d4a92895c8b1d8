import { describe, expect, it } from 'vitest';
import { LineSet } from '../../functions/rdf/parse/line-set.js';

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

  it('takes lines as UTF-8 bytes too, also across growth and with every tail length', () => {
    const set = new LineSet(16);
    const encoder = new TextEncoder();
    const add = (line: string) => {
      const bytes = encoder.encode(`x${line}\n`);
      return set.addBytes(bytes, new DataView(bytes.buffer), 1, bytes.length - 1);
    };
    for (let i = 0; i < 20_000; i++) expect(add(`<https://e/s${i}> "é ${'a'.repeat(i % 7)}" .`)).toBe(true);
    for (let i = 0; i < 20_000; i += 331) expect(add(`<https://e/s${i}> "é ${'a'.repeat(i % 7)}" .`)).toBe(false);
    expect(add('')).toBe(true);
    expect(add('')).toBe(false);
    expect(add('abcd')).toBe(true);
    expect(add('abcd\u0000')).toBe(true);
    expect(set.size).toBe(20_003);
  });
});
