// Entry of the import's parse worker thread (the code is import-worker.ts). In a Lambda or
// container bundle, esbuild compiled it beside this file as import-worker-bundle.mjs
// (lib/constructs/app-function.ts, afterBundlingCommands); run from the sources (tsx, vitest),
// tsx compiles the TypeScript in this thread. The module names are computed so that bundlers and
// the dependency rules do not take them for imports of this file.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundled = new URL('./import-worker-bundle.mjs', import.meta.url);
if (existsSync(fileURLToPath(bundled))) {
  await import(bundled.href);
} else {
  const tsxApi = ['tsx', 'esm', 'api'].join('/');
  const { register } = await import(tsxApi);
  register();
  await import(new URL('./import-worker.ts', import.meta.url).href);
}
