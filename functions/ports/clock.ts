/** Clock port: time for the domain, which never reads the system clock or sets timers itself. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
  /** Calls `action` once after `ms` milliseconds unless the returned cancel function runs first. */
  after(ms: number, action: () => void): () => void;
}
