/**
 * aws-local-stepfunctions 3.0.0 calls `Promise.withResolvers` (Node 22); the embedded platform
 * runs on Node 20, so this module is imported before it.
 */
type Resolvers<T> = { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void };
const P = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof P.withResolvers !== 'function') {
  P.withResolvers = <T>() => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
