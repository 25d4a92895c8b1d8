/**
 * Running a saved SELECT query, 1,000 rows a page, next to the same page sent straight to the
 * service's SPARQL endpoint (`LIMIT 1000 OFFSET n`, SPARQL JSON) in the same run, on the service
 * sparql.ts loaded. Runs are sequential over one keep-alive connection and interleaved (the order
 * rotates every round); round k asks page (k mod PAGES) + 1 of every variant. Two saved-query
 * variants: the default answer (TriplyDB's JSON array of bindings) and SPARQL JSON by Accept.
 *
 * Aim (from the issue): saved-query median ≤ 1.2× the direct query. Prints figures; asserts nothing.
 */
import { loadavg } from 'node:os';
import { aimText, deltaMs, ratioFixed, int, ms, stats, type TimedResponse } from './bench-http.js';
import type { SparqlBench } from './sparql.js';

const AIM = 1.2;
const PAGE_SIZE = 1000;
const PAGES = 10;
const WARMUP_ROUNDS = 10;
const ROUNDS = Number(process.env.BENCH_SAVED_QUERY_RUNS ?? 100);
const QUERY_NAME = 'people-page';

const QUERY_BODY = `SELECT ?person ?name ?birthDate WHERE { ?person a schema:Person ; schema:name ?name ; schema:birthDate ?birthDate }`;

export async function benchSavedQueries(bench: SparqlBench, options: { log?: (line: string) => void } = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { api, client, platform, account } = bench;
  const QUERY = bench.prefixes + QUERY_BODY;
  await api.json('POST', `/queries/${account}`, {
    name: QUERY_NAME,
    accessLevel: 'public',
    dataset: bench.datasetId,
    serviceConfig: { type: 'virtuoso' },
    requestConfig: { payload: { query: QUERY } },
  });
  const counted = bench.store.query(QUERY.replace('SELECT ?person ?name ?birthDate', 'SELECT (COUNT(*) AS ?n)'), { use_default_graph_as_union: true }) as Map<string, { value: string }>[];
  const pages = Math.max(1, Math.min(PAGES, Math.floor(Number(counted[0]!.get('n')!.value) / PAGE_SIZE)));
  const runUrl = (page: number) => `${platform.url}/queries/${account}/${QUERY_NAME}/run?page=${page}&pageSize=${PAGE_SIZE}`;
  const directUrl = (page: number) =>
    `${platform.url}${bench.endpoint}?query=${encodeURIComponent(`${QUERY} LIMIT ${PAGE_SIZE} OFFSET ${(page - 1) * PAGE_SIZE}`)}`;

  const variants: { name: string; get(page: number): Promise<TimedResponse>; rows(body: string): number }[] = [
    {
      name: 'direct SPARQL endpoint (SPARQL JSON)',
      get: (page) => client.get(directUrl(page), { accept: 'application/sparql-results+json' }),
      rows: (body) => JSON.parse(body).results.bindings.length,
    },
    {
      name: 'saved query run (default JSON array)',
      get: (page) => client.get(runUrl(page)),
      rows: (body) => JSON.parse(body).length,
    },
    {
      name: 'saved query run (SPARQL JSON)',
      get: (page) => client.get(runUrl(page), { accept: 'application/sparql-results+json' }),
      rows: (body) => JSON.parse(body).results.bindings.length,
    },
  ];
  const samples = variants.map(() => [] as number[]);
  const bytes = variants.map(() => 0);
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const page = (round % pages) + 1;
    for (let j = 0; j < variants.length; j++) {
      const v = (round + j) % variants.length;
      const res = await variants[v]!.get(page);
      if (res.status !== 200) throw new Error(`${variants[v]!.name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
      if (round < WARMUP_ROUNDS) {
        const rows = variants[v]!.rows(res.body.toString('utf8'));
        if (rows !== PAGE_SIZE) throw new Error(`${variants[v]!.name}: page ${page} has ${rows} rows, not ${PAGE_SIZE}`);
        bytes[v] = res.bytes;
        continue;
      }
      samples[v]!.push(res.ms);
    }
  }
  log(
    `# Saved query (${PAGE_SIZE} rows a page, pages 1–${pages} in turn, 3 columns, over the ${int(bench.statements)}-statement service): ` +
      `${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up, each round all variants in rotating order; request → last byte; load average ${loadavg()[0]!.toFixed(1)}. Aim: saved query median ≤ ${AIM}× direct`,
  );
  const direct = stats(samples[0]!);
  for (let v = 0; v < variants.length; v++) {
    const s = stats(samples[v]!);
    const ratio = s.median / direct.median;
    log(
      `${variants[v]!.name.padEnd(38)} ${(bytes[v]! / 1024).toFixed(0)} KiB: median ${ms(s.median)}, p99 ${ms(s.p99)}` +
        (v === 0 ? '' : `; ratio to direct ${ratioFixed(ratio, AIM)}× (${deltaMs(s.median - direct.median)}), p99 ratio ${(s.p99 / direct.p99).toFixed(2)}× (aim ≤ ${AIM}×: ${aimText(ratio <= AIM)})`),
    );
  }
}
