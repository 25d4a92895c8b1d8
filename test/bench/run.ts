/**
 * `npm run bench`: starts the embedded platform in its own process (as `npm start` does) and
 * measures request latency from this process over loopback, then import/export throughput of a
 * generated dataset (import-export.ts; `BENCH_STATEMENTS`, default 1,000,000), then SPARQL through a
 * service next to in-process oxigraph (sparql.ts) and saved-query runs next to the same page sent
 * straight to the service (saved-queries.ts), then flow runs next to the bare executor (flows.ts),
 * on the same platform process. Prints figures; asserts nothing. `BENCH_ONLY=flows,sparql` runs only
 * the named parts (requests, import-export, sparql, virtuoso, graphql, search, data-routes, flows, console). `virtuoso`: `virtuoso` services
 * on virtuoso-t (VIRTUOSO_HOSTS) next to Virtuoso queried directly and the embedded engine (virtuoso.ts).
 */
import { startPlatformProcess } from './embedded-server.js';
import { benchImportExport } from './import-export.js';
import { formatLoad, load, rssMiB, startBareServer } from './load.js';
import { benchSavedQueries } from './saved-queries.js';
import { benchSparql } from './sparql.js';
import { benchFlows, benchHookLatency } from './flows.js';
import { benchVirtuoso } from './virtuoso.js';
import { benchGraphql } from './graphql.js';
import { benchSearch } from './search.js';
import { benchDataRoutes } from './data-routes.js';
import { formatAims, recordAim } from './aims.js';
import { benchConsole } from './console.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const CONCURRENCY = 16;
const WARM_UP = 2000;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const part = (name: string) => !ONLY || ONLY.has(name);

const platform = await startPlatformProcess();
try {
  const auth = { authorization: `Bearer ${platform.adminToken}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${platform.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  await post('/accounts', { type: 'org', accountName: 'bench' });
  await post('/datasets/bench', { name: 'public-data', accessLevel: 'public' });
  await post('/datasets/bench', { name: 'private-data', accessLevel: 'private' });

  if (part('requests')) {
  console.log(`# GET /datasets/{account}/{dataset} on the embedded platform (${platform.url})`);
  const tokenHeaders = { authorization: auth.authorization };
  // Warm-up, each variant as it will be measured: JIT, connection pool, LevelDB caches (with 500
  // requests in all the first measured variant still ran about 2× slower than a later one).
  await load(`${platform.url}/datasets/bench/public-data`, { requests: WARM_UP, concurrency: CONCURRENCY });
  await load(`${platform.url}/datasets/bench/private-data`, { requests: WARM_UP, concurrency: CONCURRENCY, headers: tokenHeaders });
  const anonymous = await load(`${platform.url}/datasets/bench/public-data`, { requests: REQUESTS, concurrency: CONCURRENCY });
  console.log(formatLoad('public dataset, anonymous', anonymous));
  const withToken = await load(`${platform.url}/datasets/bench/private-data`, { requests: REQUESTS, concurrency: CONCURRENCY, headers: tokenHeaders });
  console.log(formatLoad('private dataset, API token', withToken));
  // The floor on this machine: the same client against a bare node:http server in its own process.
  const bare = await startBareServer();
  let floor;
  try {
    await load(bare.url, { requests: WARM_UP, concurrency: CONCURRENCY });
    floor = await load(bare.url, { requests: REQUESTS, concurrency: CONCURRENCY });
  } finally {
    bare.stop();
  }
  console.log(formatLoad('floor: bare Node HTTP server (own process), same client', floor));
  recordAim(
    'GET /datasets/{a}/{d} at concurrency 16',
    `median ${anonymous.medianMs.toFixed(1)} ms, p99 ${anonymous.p99Ms.toFixed(1)} ms anonymous; median ${withToken.medianMs.toFixed(1)} ms, p99 ${withToken.p99Ms.toFixed(1)} ms with a token (bare Node server: p99 ${floor.p99Ms.toFixed(1)} ms)`,
    'p99 ≤ 10 ms',
    Math.max(anonymous.p99Ms, withToken.p99Ms) <= 10,
  );
  const rss = await rssMiB(platform.pid);
  if (rss !== undefined) console.log(`platform resident memory after the runs: ${rss.toFixed(0)} MiB`);
  }

  if (part('import-export')) {
    console.log('');
    await benchImportExport(platform);
  }

  if (part('sparql')) {
    console.log('');
    const sparql = await benchSparql(platform);
    try {
      console.log('');
      await benchSavedQueries(sparql);
    } finally {
      await sparql.close();
    }
  }

  if (part('virtuoso')) {
    // Its own platform process (with VIRTUOSO_HOSTS); skips loudly without virtuoso-t.
    console.log('');
    await benchVirtuoso();
  }

  if (part('graphql')) {
    // A 1,000-node GraphQL connection with two nested levels next to the same read in SPARQL (graphql.ts).
    console.log('');
    await benchGraphql(platform);
  }

  if (part('search')) {
    // Text search services: indexing 1 M statements and a mix of 10 searches, next to MiniSearch in-process (search.ts).
    console.log('');
    await benchSearch(platform);
  }

  if (part('data-routes')) {
    // Issue 14: import progress while indexing 1 M statements, statements pages, terms, copy (data-routes.ts).
    console.log('');
    await benchDataRoutes(platform);
  }

  if (part('flows')) {
    console.log('');
    await benchFlows(platform);
    console.log('');
    await benchHookLatency(platform);
  }
  if (part('console')) {
    console.log('');
    await benchConsole(platform);
  }
  const aims = formatAims();
  if (aims.length > 0) console.log(['', ...aims].join('\n'));
} finally {
  await platform.stop();
}
