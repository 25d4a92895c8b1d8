/**
 * Property test (issue 11, finding 3 and the import findings): random and mutated documents in
 * every RDF format (valid seeds with random edits, deep nesting, random bytes, and gzip of them,
 * whole or cut short) uploaded as imports. Every job ends, finished or failed with a message that
 * is not the internal-error one; no request gets a 5xx; the event loop never stalls; the platform
 * keeps answering.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUZZ_SEED, MAX_EVENT_LOOP_BLOCK_MS, watchEventLoop } from '../support/fuzz.js';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';

const EX = 'https://example.org/';
const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

interface FormatCase {
  extension: string;
  seed: string;
  /** Tokens that matter to this syntax, for edits. */
  tokens: string[];
  /** A document nested `depth` levels deep, with `kind` choosing among the syntax's nestings. */
  nested(depth: number, kind: number, balanced: boolean): string;
}

const cut = (close: string, balanced: boolean) => (balanced ? close : close.slice(0, close.length >> 1));

const FORMATS: FormatCase[] = [
  {
    extension: 'ttl',
    seed: `@prefix ex: <${EX}> .\n@base <${EX}> .\nex:a a ex:Person ; ex:name "Alice"@en , """long\nname""" ; ex:knows [ ex:name "B" ] ; ex:list ( 1 2.5 true ) .\n<rel> ex:p _:b1 . _:b1 ex:q "x"^^ex:dt .\n`,
    tokens: ['@prefix', '<', '>', '"', '"""', '[', ']', '(', ')', ';', ',', '.', '_:', '^^', '@en', 'ex:', '\\u00', '#', '\n'],
    nested: (depth, kind, balanced) => {
      const [open, close] = kind % 2 ? ['( ', ' )'] : [`[ <${EX}p> `, ' ]'];
      return `<${EX}s> <${EX}p> ${open.repeat(depth)}"x"${cut(close.repeat(depth), balanced)} .\n`;
    },
  },
  {
    extension: 'trig',
    seed: `@prefix ex: <${EX}> .\nex:g1 { ex:a ex:p "1" , "2" . }\n{ ex:b ex:p [ ex:q ex:c ] }\nGRAPH ex:g2 { ex:c ex:p ( ex:d ) }\n`,
    tokens: ['{', '}', 'GRAPH', '<', '>', '"', '[', ']', '(', ')', ';', '.', 'ex:', '_:g'],
    nested: (depth, kind, balanced) => {
      const [open, close] = kind % 2 ? ['( ', ' )'] : [`[ <${EX}p> `, ' ]'];
      return `<${EX}g> { <${EX}s> <${EX}p> ${open.repeat(depth)}"x"${cut(close.repeat(depth), balanced)} }\n`;
    },
  },
  {
    extension: 'nt',
    seed: `<${EX}a> <${EX}p> "plain" .\n<${EX}a> <${EX}p> "lang"@en-GB .\n_:b <${EX}p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n<${EX}a> <${EX}p> "esc \\" \\n \\u00e9" .\n`,
    tokens: ['<', '>', '"', '.', '_:', '^^', '@', '\\', '\\u', '\n', ' '],
    nested: (depth, _kind, balanced) => `<${EX}s> <${EX}p> "${'\\"'.repeat(depth)}"${balanced ? ' .' : ''}\n`,
  },
  {
    extension: 'nq',
    seed: `<${EX}a> <${EX}p> "1" <${EX}g1> .\n<${EX}a> <${EX}p> "2" .\n_:b <${EX}p> _:c _:g .\n`,
    tokens: ['<', '>', '"', '.', '_:', '^^', '@', '\\', '\n', ' '],
    nested: (depth, _kind, balanced) => `<${EX}s> <${EX}p> <${EX}${'o'.repeat(depth)}> <${EX}g>${balanced ? ' .' : ''}\n`,
  },
  {
    extension: 'jsonld',
    seed: `{"@context":{"ex":"${EX}","name":{"@id":"ex:name","@language":"en"}},"@graph":[{"@id":"ex:a","@type":"ex:Person","name":"Alice","ex:knows":{"@id":"ex:b"},"ex:list":{"@list":[1,2.5,true]}},{"@id":"_:b1","ex:p":{"@value":"x","@type":"ex:dt"}}]}`,
    tokens: ['{', '}', '[', ']', '"', ':', ',', '"@id"', '"@context"', '"@list"', '"@graph"', '"@value"', '"@type"', '\\u00', 'null'],
    nested: (depth, kind, balanced) => {
      if (kind % 3 === 0) return `${`{"@id":"${EX}n","${EX}p":`.repeat(depth)}"x"${cut('}'.repeat(depth), balanced)}`;
      if (kind % 3 === 1) return `{"@id":"${EX}s","${EX}p":${'['.repeat(depth)}"x"${cut(']'.repeat(depth), balanced)}}`;
      return `{"@id":"${EX}s","${EX}p":${'{"@list":['.repeat(depth)}"x"${cut(']}'.repeat(depth), balanced)}}`;
    },
  },
  {
    extension: 'rdf',
    seed: `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [<!ENTITY ex "${EX}">]>\n<rdf:RDF xmlns:rdf="${RDF_NS}" xmlns:ex="${EX}">\n<rdf:Description rdf:about="&ex;a"><ex:name xml:lang="en">Alice</ex:name><ex:knows rdf:resource="&ex;b"/><ex:list rdf:parseType="Collection"><rdf:Description rdf:about="&ex;c"/></ex:list></rdf:Description>\n<ex:Person rdf:nodeID="b1"><ex:p rdf:datatype="&ex;dt">x</ex:p></ex:Person>\n</rdf:RDF>\n`,
    tokens: ['<', '>', '/>', '</', '"', '&', ';', '&ex;', '<!ENTITY x "&ex;">', '<!DOCTYPE', '<![CDATA[', ']]>', '<!--', 'rdf:about=', 'rdf:parseType="Literal"', 'xmlns:'],
    nested: (depth, kind, balanced) => {
      const [open, close] = kind % 2 ? ['<ex:p><rdf:Description>', '</rdf:Description></ex:p>'] : ['<ex:p rdf:parseType="Resource">', '</ex:p>'];
      return `<rdf:RDF xmlns:rdf="${RDF_NS}" xmlns:ex="${EX}"><rdf:Description rdf:about="${EX}s">${open.repeat(depth)}x${cut(close.repeat(depth), balanced)}</rdf:Description></rdf:RDF>\n`;
    },
  },
];

const format = fc.constantFrom(...FORMATS);

/** A valid seed with random insertions, deletions and repetitions. */
const edited = format.chain((f) =>
  fc
    .array(
      fc.record({
        at: fc.nat(),
        kind: fc.constantFrom('insert', 'delete', 'repeat'),
        text: fc.oneof(fc.constantFrom(...f.tokens), fc.string({ maxLength: 4 })),
        n: fc.integer({ min: 1, max: 300 }),
      }),
      { maxLength: 5 },
    )
    .map((edits) => {
      let text = f.seed;
      for (const e of edits) {
        const at = e.at % (text.length + 1);
        if (e.kind === 'insert') text = text.slice(0, at) + e.text + text.slice(at);
        else if (e.kind === 'delete') text = text.slice(0, at) + text.slice(at + (e.n % 30));
        else text = text.slice(0, at) + text.slice(at, at + 6).repeat(e.n) + text.slice(at + 6);
      }
      return { f, body: Buffer.from(text) };
    }),
);
const nested = fc
  .record({ f: format, depth: fc.integer({ min: 1, max: 5_000 }), kind: fc.nat(5), balanced: fc.boolean() })
  .map(({ f, depth, kind, balanced }) => ({ f, body: Buffer.from(f.nested(depth, kind, balanced)) }));
const randomBytes = fc.record({ f: format, bytes: fc.uint8Array({ maxLength: 3_000 }) }).map(({ f, bytes }) => ({ f, body: Buffer.from(bytes) }));
const randomText = fc.record({ f: format, text: fc.string({ maxLength: 2_000 }) }).map(({ f, text }) => ({ f, body: Buffer.from(text) }));
const seedAsIs = format.map((f) => ({ f, body: Buffer.from(f.seed) }));

/** Any of the above, sometimes gzipped (whole, or cut short) under a `.gz` name. */
const upload = fc
  .record({
    doc: fc.oneof(edited, nested, randomBytes, randomText, seedAsIs),
    gzip: fc.constantFrom('none', 'none', 'whole', 'cut'),
    cutAt: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ doc, gzip, cutAt }) => {
    if (gzip === 'none') return { name: `fuzz.${doc.f.extension}`, content: doc.body };
    const packed = gzipSync(doc.body);
    return { name: `fuzz.${doc.f.extension}.gz`, content: gzip === 'whole' ? packed : packed.subarray(0, Math.floor(packed.length * cutAt)) };
  });

let p: TestPlatform;
let alice: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  await p.createDataset('alice', 'fuzz', 'private', alice);
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

describe('hostile RDF uploads', () => {
  it('every job ends with a result or a message of its own, never a 5xx, never a stalled event loop', async () => {
    const watch = watchEventLoop();
    let finished = 0;
    let failed = 0;
    await fc.assert(
      fc.asyncProperty(upload, async (file) => {
        const job = await importFiles(p, alice, 'alice/fuzz', [file]);
        const context = `${file.name} (${file.content.length} bytes): ${JSON.stringify(job).slice(0, 300)}`;
        if (job.status === 'finished') {
          finished++;
          return;
        }
        // Refused before a job exists (e.g. an empty file name): a 4xx with a message.
        if (typeof job.status === 'number') {
          expect(job.status, context).toBeLessThan(500);
          expect(job.message, context).toEqual(expect.any(String));
          return;
        }
        expect(job.status, context).toBe('error');
        expect(job.error?.message, context).toEqual(expect.any(String));
        expect(job.error.message, context).not.toMatch(/internal error/);
        failed++;
      }),
      { seed: FUZZ_SEED, numRuns: 120 },
    );
    expect(watch.stop()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
    // The generators hold valid seeds and broken files alike: both outcomes happened.
    expect(finished).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    // Still serving, and still importing.
    const after = await importFiles(p, alice, 'alice/fuzz', [{ name: 'after.ttl', content: `<${EX}s> <${EX}p> "after" .\n` }]);
    expect(after.status, after.error?.message).toBe('finished');
  }, 120_000);
});
