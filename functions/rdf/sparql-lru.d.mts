export declare const stringBytes: (length: number) => number;

export declare class ByteBoundedLru<V> {
  constructor(maxBytes: number, sizeOf: (value: V, key: string) => number);
  readonly maxBytes: number;
  /** The sum of the entries' estimated sizes; never above maxBytes. */
  readonly bytes: number;
  readonly size: number;
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  clear(): void;
}
