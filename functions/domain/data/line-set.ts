/**
 * Remembers which lines a graph already holds, in about 20 bytes a line however long the line:
 * an open-addressing table of two independent 32-bit hashes (the line length folded into the
 * second) in typed arrays, so a million lines cost no strings and almost no garbage collection.
 * A false "seen" needs both hashes to collide: odds of about 1 in 10^10 for a million-line graph,
 * traded for flat memory on large imports.
 */
export class LineSet {
  private first: Int32Array;
  private second: Int32Array;
  private used: Uint8Array;
  private count = 0;

  constructor(initialCapacity = 1024) {
    const capacity = 1 << Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.first = new Int32Array(capacity);
    this.second = new Int32Array(capacity);
    this.used = new Uint8Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Adds the line; false when it was already there. */
  add(line: string): boolean {
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c ^ line.length;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    if ((this.count + 1) * 2 > this.used.length) this.grow();
    return this.insert(h1 | 0, h2 | 0);
  }

  private insert(h1: number, h2: number): boolean {
    const mask = this.used.length - 1;
    let slot = (h1 ^ (h2 >>> 7)) & mask;
    // Linear probing; the table stays at most half full, so probes are short.
    for (;;) {
      if (!this.used[slot]) {
        this.used[slot] = 1;
        this.first[slot] = h1;
        this.second[slot] = h2;
        this.count++;
        return true;
      }
      if (this.first[slot] === h1 && this.second[slot] === h2) return false;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const { first, second, used } = this;
    const capacity = used.length * 2;
    this.first = new Int32Array(capacity);
    this.second = new Int32Array(capacity);
    this.used = new Uint8Array(capacity);
    this.count = 0;
    for (let i = 0; i < used.length; i++) if (used[i]) this.insert(first[i]!, second[i]!);
  }
}
