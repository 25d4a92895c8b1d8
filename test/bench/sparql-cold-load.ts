/**
 * What a cold SPARQL function does before its first answer: load a snapshot into the embedded
 * engine. For each size, a fresh Node process (as a cold Lambda) opens the engine with the
 * replicas the AWS composition uses (1) and with the embedded default (2), from generate.ts's
 * data fed as N-Quads chunks (as the graph catalog feeds it), and reports load time and the
 * process's peak resident memory (worker threads included). The figures set the statement limit
 * of `awsSparqlLimits` in functions/config.ts.
 *
 * `npx tsx test/bench/sparql-cold-load.ts [sizes=100000,250000,500000]`
 */
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createOxigraphEngine } from '../../functions/adapters/common/oxigraph/oxigraph-engine.js';
import { generateDataset } from './generate.js';

async function* nquadChunks(file: string): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = rest + (chunk as string);
    const cut = text.lastIndexOf('\n') + 1;
    rest = text.slice(cut);
    if (cut > 0) yield text.slice(0, cut);
  }
  if (rest) yield `${rest}\n`;
}

async function child(file: string, statements: number, replicas: number): Promise<void> {
  const logger = { debug() {}, info() {}, warn() {}, error: (m: string, d?: unknown) => console.error(m, d) };
  const started = performance.now();
  const store = await createOxigraphEngine(logger as never).open({ statements, chunks: () => nquadChunks(file) }, { reasoner: 'None', replicas });
  const loadMs = performance.now() - started;
  const q = performance.now();
  await store.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', format: 'application/sparql-results+json', timeoutMs: 60_000 });
  const countMs = performance.now() - q;
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  await store.close();
  console.log(JSON.stringify({ statements, replicas, loadMs: Math.round(loadMs), countMs: Math.round(countMs), peakMiB: Math.round(peakMiB) }));
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]));
  const sizes = (process.argv[2] ?? '100000,250000,500000').split(',').map(Number);
  const self = fileURLToPath(import.meta.url);
  console.log(`node ${process.version}`);
  for (const n of sizes) {
    const data = await generateDataset(n);
    try {
      for (const replicas of [1, 2]) {
        const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--child', data.ntriples, String(data.statements), String(replicas)], { encoding: 'utf8' });
        process.stdout.write(out);
      }
    } finally {
      await rm(data.dir, { recursive: true, force: true });
    }
  }
}

await main();
