// A least-recently-used cache bounded by an estimate of the bytes it holds (not by entry count:
// a thousand one-megabyte queries must not pin a gigabyte). Plain JavaScript so that the SPARQL
// parse worker (a plain .mjs, copied into each Lambda bundle) and the TypeScript code share it.

/** Bytes a JavaScript string of `length` UTF-16 code units takes, at most. */
export const stringBytes = (length) => 2 * length;

/** Bookkeeping per entry (the Map slot, the entry object): a rough constant. */
const ENTRY_OVERHEAD_BYTES = 96;

export class ByteBoundedLru {
  /**
   * @param {number} maxBytes the bound on the sum of the entries' estimated sizes
   * @param {(value: unknown, key: string) => number} sizeOf the estimated bytes a value holds
   */
  constructor(maxBytes, sizeOf) {
    this.maxBytes = maxBytes;
    this.sizeOf = sizeOf;
    /** key -> { value, bytes }, oldest first (Map keeps insertion order; a hit re-inserts). */
    this.entries = new Map();
    this.bytes = 0;
  }

  get size() {
    return this.entries.size;
  }

  get(key) {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key, value) {
    this.delete(key);
    const bytes = stringBytes(key.length) + this.sizeOf(value, key) + ENTRY_OVERHEAD_BYTES;
    // One entry may take at most a quarter of the cache, so a few huge texts cannot flush
    // everything the regular callers reuse.
    if (bytes > this.maxBytes / 4) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  delete(key) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  clear() {
    this.entries.clear();
    this.bytes = 0;
  }
}
