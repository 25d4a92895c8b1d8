// One Lambda execution environment: a child process that imports a function's bundle (its asset
// folder, as Lambda unpacks it) and runs one invocation at a time, told by the harness over IPC.
// Plain JavaScript so it needs no TypeScript loader (Lambda runs the bundle on plain Node).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [, , taskRoot, handlerSpec] = process.argv;
const [moduleName, exportName] = handlerSpec.split('.');
let handler;
async function load() {
  const mod = await import(pathToFileURL(join(taskRoot, `${moduleName}.mjs`)).href);
  handler = mod[exportName];
  if (typeof handler !== 'function') throw new Error(`Runtime.HandlerNotFound: ${handlerSpec} is undefined or not exported`);
}
const loaded = load();

function errorOf(e) {
  return { errorType: e?.name ?? 'Error', errorMessage: e?.message ?? String(e), trace: String(e?.stack ?? '').split('\n') };
}

process.on('message', async (msg) => {
  if (msg.type !== 'invoke') return;
  const deadline = msg.deadline;
  const context = {
    awsRequestId: msg.requestId,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: msg.functionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'harness',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    await loaded;
    const result = await handler(msg.event, context);
    const payload = result === undefined ? 'null' : JSON.stringify(result);
    process.send({ type: 'result', id: msg.id, payload });
  } catch (e) {
    process.send({ type: 'error', id: msg.id, error: errorOf(e) });
  }
});
// Lambda reports an error thrown outside the handler's promise as the invocation's failure and
// replaces the environment; the harness kills the instance on this message.
process.on('uncaughtException', (e) => process.send?.({ type: 'crash', error: errorOf(e) }));
process.on('unhandledRejection', (e) => process.send?.({ type: 'crash', error: errorOf(e) }));
process.send({ type: 'ready' });
