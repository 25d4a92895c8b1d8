/**
 * Memory stays flat: serializing and parsing many quads must not collect them. Heap is measured
 * after forced collections (gc exposed at run time), so only retained memory counts.
 * No timing assertions.
 */
import { Readable } from 'node:stream';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { EXPORT_FORMATS, formatByName } from '../../functions/rdf/formats.js';
import type { NtQuad } from '../../functions/rdf/nt.js';
import { parseRdf } from '../../functions/rdf/parse.js';
import { serializeRdf } from '../../functions/rdf/serialize.js';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const N = 200_000;

function quadAt(i: number): NtQuad {
  const s = `<https://example.org/id/item${i >> 2}>`;
  const g = `<https://example.org/graph/${Math.floor(i / 50_000)}>`;
  switch (i & 3) {
    case 0: return { subject: s, predicate: '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', object: '<https://example.org/def/Thing>', graph: g };
    case 1: return { subject: s, predicate: '<http://www.w3.org/2000/01/rdf-schema#label>', object: `"Item ${i} with \\"quotes\\" and a\\nnewline"@en`, graph: g };
    case 2: return { subject: s, predicate: '<https://example.org/def/count>', object: `"${i}"^^<http://www.w3.org/2001/XMLSchema#integer>`, graph: g };
    default: return { subject: s, predicate: '<https://example.org/def/node>', object: `_:b${i}`, graph: g };
  }
}

function generated(n: number, counter?: { batches: number }): AsyncGenerator<NtQuad[]> {
  return (async function* () {
    for (let i = 0; i < n; i += 1000) {
      if (counter) counter.batches++;
      const batch: NtQuad[] = [];
      for (let k = i; k < Math.min(n, i + 1000); k++) batch.push(quadAt(k));
      yield batch;
    }
  })();
}

/** Heap after a full collection. */
function retainedHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

describe('streaming serialization', () => {
  for (const format of EXPORT_FORMATS) {
    it(`${format.name}: ${N} quads with a flat heap`, async () => {
      const base = retainedHeap();
      let bytes = 0;
      let chunks = 0;
      let peak = 0;
      for await (const chunk of serializeRdf(generated(N), { format, prefixes: [{ prefixLabel: 'ex', iri: 'https://example.org/def/' }] })) {
        bytes += (chunk as Buffer).length;
        if (++chunks % 40 === 0) peak = Math.max(peak, retainedHeap() - base);
      }
      peak = Math.max(peak, retainedHeap() - base);
      expect(bytes).toBeGreaterThan(10_000_000);
      // Collecting the output (or the quads) would retain more than `bytes`; measured ≤ 1 MB.
      expect(peak).toBeLessThan(Math.min(bytes / 3, 4_000_000));
    });
  }

  it('pulls batches only as the output is read (backpressure)', async () => {
    const counter = { batches: 0 };
    const stream = serializeRdf(generated(N, counter), { format: formatByName('nquads') });
    for await (const chunk of stream) {
      expect((chunk as Buffer).length).toBeGreaterThan(0);
      break;
    }
    expect(counter.batches).toBeLessThan(5);
  });
});

describe('streaming parsing', () => {
  function ntText(n: number, counter?: { chunks: number }): Readable {
    return Readable.from(
      (async function* () {
        for (let i = 0; i < n; i += 500) {
          if (counter) counter.chunks++;
          let text = '';
          for (let k = i; k < Math.min(n, i + 500); k++) {
            const q = quadAt(k);
            text += `${q.subject} ${q.predicate} ${q.object} .\n`;
          }
          yield Buffer.from(text);
        }
      })(),
      { objectMode: false },
    );
  }

  for (const name of ['ntriples', 'turtle'] as const) {
    it(`${name}: ${N} statements with a flat heap`, async () => {
      const base = retainedHeap();
      let quads = 0;
      let batches = 0;
      let peak = 0;
      for await (const batch of parseRdf(ntText(N), { format: formatByName(name), blankNodePrefix: 'm' })) {
        quads += batch.length;
        if (++batches % 40 === 0) peak = Math.max(peak, retainedHeap() - base);
      }
      expect(quads).toBe(N);
      // The input is ~20 MB of text; parsed quads would take several times that. Measured ≤ 1 MB.
      expect(peak).toBeLessThan(4_000_000);
    });
  }

  it('reads input only as batches are consumed (backpressure)', async () => {
    const counter = { chunks: 0 };
    for await (const batch of parseRdf(ntText(N, counter), { format: formatByName('ntriples'), blankNodePrefix: 'm' })) {
      expect(batch.length).toBeGreaterThan(0);
      break;
    }
    expect(counter.chunks).toBeLessThan(10);
  });
});
