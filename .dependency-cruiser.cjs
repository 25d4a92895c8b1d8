// The dependency rule of shared/DESIGN.md ("Layout"), checked by dependency-cruiser in `npm test`
// (`npm run lint:deps`). Imports point inward: handlers → http → domain ← adapters; ports are the
// interfaces the domain needs; rdf is pure RDF code below the domain; composition/ wires adapters.
// Each rule says why it exists. Paths are repo-relative.
//
// Parser: swc, because dependency-cruiser reads TypeScript only through typescript < 7 (we run 7).
// swc does not tell `import type` from `import`, so type imports count too: a layer that may not
// import another may not borrow its types either (move the type to where both may see it).

/** Node built-ins that reach the world (files, network, processes, threads, the host). */
const IO_BUILTINS = '^(node:)?(fs|fs/promises|net|http|https|http2|dns|dns/promises|dgram|tls|child_process|cluster|worker_threads|os|inspector|v8|vm)$';

/** npm packages the domain may use: computation only, no I/O of their own. */
const DOMAIN_NPM = [
  '@rdfjs/types', // RDF/JS type declarations
  'croner', // cron expression arithmetic (next fire time)
  'graphql', // graphql-js: GraphQL parse, validate, schema and execution (no I/O)
  'n3', // in-memory RDF terms, stores and the Turtle writer
  'rdf-validate-shacl', // SHACL validation over an in-memory dataset
  're2js', // linear-time regular expressions for user patterns
  'sparqljs', // SPARQL parse and generate
  'zod', // shape checks
];
const escape = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const DOMAIN_NPM_PATH = `(^|/)node_modules/(${DOMAIN_NPM.map(escape).join('|')})/`;

/**
 * Bounded contexts of functions/domain, lowest first. A context imports only itself and the ones
 * before it, so each reads (and could later be split off) without the ones above it; a lower
 * context that needs a higher one gets it through a port or a parameter. Measured when this rule
 * was written: the graph was acyclic but for accounts → datasets (types of the services the account
 * service calls when an account is renamed or deleted).
 */
const CONTEXTS = ['shared', 'accounts', 'datasets', 'data', 'sparql', 'search', 'graphql', 'queries', 'flows'];

function contextOrderRules() {
  return CONTEXTS.slice(0, -1).map((context, index) => ({
    name: `domain-${context}-not-to-higher-contexts`,
    severity: 'error',
    comment: `Domain contexts depend downward only (${CONTEXTS.join(' < ')}): ${context} may not import ${CONTEXTS.slice(index + 1).join(', ')}.`,
    from: { path: `^functions/domain/${context}/` },
    to: { path: `^functions/domain/(${CONTEXTS.slice(index + 1).join('|')})/` },
  }));
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle makes module load order matter (undefined bindings at start-up) and means two ' +
        'modules are one in disguise: merge them or move what both need to a lower module.',
      from: { path: '^(functions|statemachines|lib|bin)/' },
      to: { circular: true },
    },

    // --- domain -------------------------------------------------------------------------------
    {
      name: 'domain-imports-only-inner-layers',
      severity: 'error',
      comment:
        'The domain holds use cases and pure rules; it talks to the world only through ports. Of our ' +
        'own code it imports only itself, ports, rdf and the pure ASL compiler (statemachines/): never ' +
        'adapters, the HTTP layer, handlers, composition, configuration read from the environment ' +
        '(config.ts, env-names.ts), lib/ or bin/.',
      from: { path: '^functions/domain/' },
      to: { dependencyTypes: ['local'], pathNot: '^(functions/(domain|ports|rdf)/|statemachines/)' },
    },
    {
      name: 'domain-not-to-aws-sdk',
      severity: 'error',
      comment: 'No AWS in the domain: the embedded runtime runs the same domain code without AWS.',
      from: { path: '^functions/domain/' },
      to: { path: '(^|/)node_modules/@aws-sdk/' },
    },
    {
      name: 'domain-not-to-io-builtins',
      severity: 'error',
      comment:
        'The domain has no I/O of its own (files, sockets, processes, threads): that is what ports ' +
        'and their adapters are for, so both runtimes and the tests can supply their own.',
      from: { path: '^functions/domain/' },
      to: { dependencyTypes: ['core'], path: IO_BUILTINS },
    },
    {
      name: 'domain-npm-allow-list',
      severity: 'error',
      comment:
        'The domain uses only npm packages that compute (no network, files or clients of their own). ' +
        'Add a package to DOMAIN_NPM in .dependency-cruiser.cjs only when it does no I/O.',
      from: { path: '^functions/domain/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'], pathNot: DOMAIN_NPM_PATH },
    },
    ...contextOrderRules(),

    // --- ports ----------------------------------------------------------------------------------
    {
      name: 'ports-not-to-implementations',
      severity: 'error',
      comment:
        'Ports are the interfaces the domain needs; they own their records and depend on no code ' +
        'that uses or implements them (types from npm packages are fine).',
      from: { path: '^functions/ports/' },
      to: {
        path: '^functions/(domain|adapters|http|handlers|containers|composition)/|^functions/(config|env-names)\\.ts$',
      },
    },

    // --- rdf ------------------------------------------------------------------------------------
    {
      name: 'rdf-is-pure',
      severity: 'error',
      comment:
        'rdf/ is pure RDF code (parse, serialize, formats) below the domain: it knows nothing of ' +
        'domain records, ports, adapters or the HTTP layer, so every layer can use it.',
      from: { path: '^functions/rdf/' },
      to: {
        path: '^functions/(domain|ports|adapters|http|handlers|containers|composition)/|^functions/(config|env-names)\\.ts$',
      },
    },

    // --- http -----------------------------------------------------------------------------------
    {
      name: 'http-not-to-adapters',
      severity: 'error',
      comment:
        'The HTTP layer is transport-neutral: it gets services already wired, so the same routes run ' +
        'on Lambda and on the embedded server. Wiring adapters is composition\'s job.',
      from: { path: '^functions/http/' },
      to: { path: '^functions/(adapters|composition|handlers|containers)/' },
    },

    // --- adapters -------------------------------------------------------------------------------
    {
      name: 'adapters-only-wired-by-composition',
      severity: 'error',
      comment:
        'Adapters are chosen in one place per runtime (composition/, and the Lambda handlers and Fargate containers that ' +
        'need a client of their own); bin/, lib/ and test/ may use them too. Anything else would ' +
        'tie a layer to one runtime.',
      from: {
        path: '^functions/',
        pathNot: '^functions/(adapters|handlers|containers|composition)/',
      },
      to: { path: '^functions/adapters/' },
    },
    {
      name: 'adapters-not-to-outer-layers',
      severity: 'error',
      comment:
        'Adapters implement ports; they are wired from outside and never reach back into the HTTP ' +
        'layer, handlers or composition (that would be a cycle of layers).',
      from: { path: '^functions/adapters/' },
      to: { path: '^functions/(http|handlers|containers|composition)/' },
    },
    {
      name: 'adapters-aws-not-to-local',
      severity: 'error',
      comment:
        'The AWS adapters are bundled into Lambda functions: they must not pull in the embedded ' +
        'stand-ins (dynalite, croner, files). Code both families share lives in adapters/common/.',
      from: { path: '^functions/adapters/aws/' },
      to: { path: '^functions/adapters/local/' },
    },
    {
      name: 'adapters-local-not-to-aws',
      severity: 'error',
      comment:
        'The embedded adapters stand in for AWS; what they share with the AWS family belongs in ' +
        'adapters/common/, so neither family depends on the other.',
      from: { path: '^functions/adapters/local/' },
      to: { path: '^functions/adapters/aws/' },
    },
    {
      name: 'adapters-common-not-to-families',
      severity: 'error',
      comment: 'adapters/common/ is shared by both families, so it imports neither.',
      from: { path: '^functions/adapters/common/' },
      to: { path: '^functions/adapters/(aws|local)/' },
    },

    // --- statemachines --------------------------------------------------------------------------
    {
      name: 'statemachines-are-pure',
      severity: 'error',
      comment:
        'statemachines/ is the pure flow → ASL compiler and run-status rules, used by the domain and ' +
        'by lib/ at synth time: it may not pull in adapters, HTTP, handlers or composition.',
      from: { path: '^statemachines/' },
      to: { path: '^functions/(adapters|http|handlers|containers|composition)/' },
    },

    // --- hygiene --------------------------------------------------------------------------------
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve fails at run time (or in a bundle).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment:
        'A module nothing imports and that imports nothing is dead code (worker modules and handlers ' +
        'are loaded by path but import packages, so they are not orphans).',
      from: { orphan: true, path: '^(functions|statemachines|lib|bin|test)/', pathNot: '\\.d\\.m?ts$' },
      to: {},
    },
    {
      name: 'functions-not-to-dev-dependencies',
      severity: 'error',
      comment:
        'Lambda bundles and the embedded platform are installed without devDependencies: runtime ' +
        'code may not import them (type-only packages aside).',
      from: { path: '^functions/', pathNot: '\\.d\\.m?ts$' },
      to: { dependencyTypes: ['npm-dev'], pathNot: '(^|/)node_modules/@types/' },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Count every import as written, type imports included (see the header).
    tsPreCompilationDeps: true,
    // ES modules throughout (worker .mjs files included); createRequire'd packages are seen as cjs.
    moduleSystems: ['es6', 'cjs'],
    // Build output and data, never sources (node_modules is not followed, but its packages stay
    // in the graph so the npm rules can see them).
    exclude: { path: '^(cdk\\.out|\\.data)/' },
    // Resolve packages the way Node (ESM) and TypeScript do: some (@triply/triplydb) only export
    // under the "import" condition.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'types', 'default'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
