/** Masking a run's secrets in text that is cut to a length (an HTTP response body kept in an output). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { secretMask } from '../../../functions/domain/flows/masking.js';
import { FUZZ_SEED } from '../../support/fuzz.js';

describe('cutting masked text', () => {
  it('masks a secret straddling the cut whole', () => {
    const mask = secretMask(['swordfish-0123456789']);
    const text = `${'x'.repeat(95)}swordfish-0123456789 and more`;
    expect(mask.cut(text, 100)).toBe(`${'x'.repeat(95)}****`);
  });

  it('leaves no part of a secret when earlier ones shrink the text (a long token echoed thrice)', () => {
    const token = `T${'k'.repeat(199)}`;
    const mask = secretMask([token]);
    // Read to max + longest: the last copy is cut by the read itself.
    const text = `${token}${token}${'x'.repeat(9_500)}${token}`.slice(0, 10_000 + token.length);
    const out = mask.cut(text, 10_000);
    expect(out).not.toContain('T');
    expect(out).not.toContain('kkkk');
    expect(out.length).toBeLessThanOrEqual(10_000);
  });

  it('never shows a character of any secret, whatever the texts, secrets and cut', () => {
    // Secrets are the only source of "S" and hex digits; filler is "x" and spaces.
    const secret = fc.stringMatching(/^S[0-9a-f]{2,40}$/);
    const piece = fc.oneof(secret.map((s) => ({ s })), fc.stringMatching(/^[x ]{0,60}$/).map((f) => ({ f })));
    fc.assert(
      fc.property(fc.uniqueArray(secret, { minLength: 1, maxLength: 5 }), fc.array(fc.oneof(piece, fc.nat({ max: 4 })), { maxLength: 40 }), fc.nat({ max: 400 }), (secrets, parts, max) => {
        const mask = secretMask(secrets);
        const text = parts.map((p) => (typeof p === 'number' ? secrets[p % secrets.length]! : 's' in p ? secrets[0]! : p.f)).join('');
        // As the task reads it: at most max + longest characters.
        const read = text.slice(0, max + mask.longest);
        const out = mask.cut(read, max);
        expect(out.length).toBeLessThanOrEqual(max);
        expect(out).not.toMatch(/[S0-9a-f]/);
      }),
      { seed: FUZZ_SEED, numRuns: 2_000 },
    );
  });
});
