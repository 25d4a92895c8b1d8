/**
 * Lambda as it runs our functions: each function's bundle in its own child processes (execution
 * environments), one invocation at a time each; a busy function gets another instance (concurrency),
 * an instance that runs past the function's Timeout is killed (the next invocation is a cold start),
 * and the payload limits hold: 6 MB for a synchronous request and response, 256 KB for an event.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGION, type DeployedFunction } from './template.js';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), 'runner.mjs');
export const SYNC_PAYLOAD_LIMIT = 6 * 1024 * 1024;
export const ASYNC_PAYLOAD_LIMIT = 256 * 1024;
/** Instances per function at most (Lambda allows far more; two cores do not). */
const MAX_INSTANCES = 4;

export type InvokeResult =
  | { ok: true; payload: string }
  | { ok: false; error: { errorType: string; errorMessage: string; trace?: string[] }; kind: 'Unhandled' | 'TooLarge' | 'Throttled' };

interface Instance {
  child: ChildProcess;
  busy: boolean;
  ready: Promise<void>;
  pending?: { id: string; resolve: (r: InvokeResult) => void; timer: NodeJS.Timeout };
}

export interface RuntimeOptions {
  /** Environment every instance gets besides the template's (endpoints, credentials, region). */
  baseEnv: (fn: DeployedFunction) => Record<string, string>;
  /** Where function output goes (the console in debug mode, else dropped). */
  verbose?: boolean;
}

export class LambdaRuntime {
  private readonly instances = new Map<string, Instance[]>();
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Every invocation, for tests: function name, outcome, cold start or not. */
  readonly invocations: { functionName: string; ok: boolean; errorType?: string; coldStart: boolean }[] = [];
  private stopped = false;

  constructor(
    readonly functions: DeployedFunction[],
    private readonly options: RuntimeOptions,
  ) {}

  byName(nameOrArn: string): DeployedFunction | undefined {
    const name = nameOrArn.startsWith('arn:') ? nameOrArn.split(':')[6]! : nameOrArn;
    return this.functions.find((f) => f.name === name || f.logicalId === name);
  }

  private spawn(fn: DeployedFunction): Instance {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TZ: 'UTC',
      LANG: 'en_US.UTF-8',
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      LAMBDA_TASK_ROOT: fn.assetDir,
      _HANDLER: fn.handler,
      ...fn.environment,
      ...this.options.baseEnv(fn),
    };
    // The template's NODE_OPTIONS, plus what the stand-ins need (s3rver's listing signatures use MD5 under OpenSSL 3).
    env.NODE_OPTIONS = [fn.environment.NODE_OPTIONS ?? '', '--openssl-legacy-provider'].join(' ').trim();
    const child = fork(RUNNER, [fn.assetDir, fn.handler], {
      cwd: fn.assetDir,
      env,
      execArgv: [`--max-old-space-size=${fn.memoryMb}`],
      stdio: this.options.verbose ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    // Errors stay visible (a crash is hard to read otherwise); other output only when verbose.
    child.stderr?.on('data', (d: Buffer) => {
      const text = d.toString();
      if (/"level":"ERROR"|Error|error/.test(text) && process.env.HARNESS_VERBOSE !== '0') process.stderr.write(`[${fn.logicalId}] ${text.slice(0, 2000)}`);
    });
    let markReady!: () => void;
    const instance: Instance = { child, busy: false, ready: new Promise<void>((r) => (markReady = r)) };
    child.on('message', (msg: any) => {
      if (msg.type === 'ready') markReady();
      else if ((msg.type === 'result' || msg.type === 'error') && instance.pending?.id === msg.id) {
        const p = instance.pending!;
        clearTimeout(p.timer);
        instance.pending = undefined;
        if (msg.type === 'result' && Buffer.byteLength(msg.payload) > SYNC_PAYLOAD_LIMIT) {
          p.resolve({ ok: false, kind: 'TooLarge', error: { errorType: 'Function.ResponseSizeTooLarge', errorMessage: `Response payload size exceeded maximum allowed payload size (${SYNC_PAYLOAD_LIMIT} bytes).` } });
        } else p.resolve(msg.type === 'result' ? { ok: true, payload: msg.payload } : { ok: false, kind: 'Unhandled', error: msg.error });
        this.release(fn, instance);
      } else if (msg.type === 'crash') {
        const p = instance.pending;
        this.kill(fn, instance);
        if (p) {
          clearTimeout(p.timer);
          p.resolve({ ok: false, kind: 'Unhandled', error: { ...msg.error, errorType: `Runtime.${msg.error.errorType}` } });
        }
      }
    });
    child.on('exit', (code, signal) => {
      const p = instance.pending;
      this.kill(fn, instance);
      if (p) {
        clearTimeout(p.timer);
        const oom = signal === null && code !== 0;
        p.resolve({ ok: false, kind: 'Unhandled', error: { errorType: oom ? 'Runtime.ExitError' : 'Runtime.ExitError', errorMessage: `RequestId: ${p.id} Error: Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`}` } });
      }
    });
    const list = this.instances.get(fn.name) ?? [];
    list.push(instance);
    this.instances.set(fn.name, list);
    return instance;
  }

  private kill(fn: DeployedFunction, instance: Instance): void {
    const list = this.instances.get(fn.name) ?? [];
    const i = list.indexOf(instance);
    if (i >= 0) list.splice(i, 1);
    if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGKILL');
    this.wake(fn);
  }

  private release(fn: DeployedFunction, instance: Instance): void {
    instance.busy = false;
    this.wake(fn);
  }

  private wake(fn: DeployedFunction): void {
    this.waiting.get(fn.name)?.shift()?.();
  }

  private async acquire(fn: DeployedFunction): Promise<{ instance: Instance; coldStart: boolean }> {
    for (let attempt = 0; attempt < 100_000; attempt++) {
      if (this.stopped) throw new Error('harness stopped');
      const list = this.instances.get(fn.name) ?? [];
      const idle = list.find((i) => !i.busy);
      if (idle) {
        idle.busy = true;
        return { instance: idle, coldStart: false };
      }
      if (list.length < MAX_INSTANCES) {
        const fresh = this.spawn(fn);
        fresh.busy = true;
        return { instance: fresh, coldStart: true };
      }
      await new Promise<void>((r) => {
        const q = this.waiting.get(fn.name) ?? [];
        q.push(r);
        this.waiting.set(fn.name, q);
      });
    }
    throw new Error('harness: no instance became free');
  }

  /** One invocation as Lambda runs it (sync: 6 MB each way; `event`: 256 KB). */
  async invoke(fn: DeployedFunction, event: unknown, options: { async?: boolean } = {}): Promise<InvokeResult> {
    const body = JSON.stringify(event ?? null);
    const limit = options.async ? ASYNC_PAYLOAD_LIMIT : SYNC_PAYLOAD_LIMIT;
    if (Buffer.byteLength(body) > limit) {
      return { ok: false, kind: 'TooLarge', error: { errorType: 'RequestEntityTooLargeException', errorMessage: `${Buffer.byteLength(body)} byte payload is too large for the ${options.async ? 'Event' : 'RequestResponse'} invocation type (limit ${limit} bytes)` } };
    }
    const { instance, coldStart } = await this.acquire(fn);
    await instance.ready;
    const id = randomUUID();
    const result = await new Promise<InvokeResult>((resolve) => {
      const timer = setTimeout(() => {
        // Lambda ends the environment at the timeout: the next invocation starts a fresh one.
        instance.pending = undefined;
        this.kill(fn, instance);
        resolve({ ok: false, kind: 'Unhandled', error: { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds` } });
      }, fn.timeoutSeconds * 1000);
      instance.pending = { id, resolve, timer };
      instance.child.send({ type: 'invoke', id, requestId: id, functionArn: fn.arn, event: JSON.parse(body), deadline: Date.now() + fn.timeoutSeconds * 1000 });
    });
    this.invocations.push({ functionName: fn.name, ok: result.ok, errorType: result.ok ? undefined : result.error.errorType, coldStart });
    return result;
  }

  /** Ends every instance (the next invocation of each function is a cold start). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const [name, list] of this.instances) {
      const fn = this.byName(name)!;
      for (const i of [...list]) this.kill(fn, i);
    }
    for (const q of this.waiting.values()) for (const w of q.splice(0)) w();
  }
}
