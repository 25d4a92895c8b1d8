/**
 * Remembers which lines a graph already holds, in about 20 bytes a line however long the line:
 * an open-addressing table of two independent 32-bit hashes (the line length folded into the
 * second) in typed arrays, so a million lines cost no strings and almost no garbage collection.
 * A false "seen" needs both hashes to collide: odds of about 1 in 10^10 for a million-line graph,
 * traded for flat memory on large imports.
 */
export class LineSet {
  /** Slot i holds its two hashes at 2i and 2i + 1 (one cache line per probe); (0, 0) is empty. */
  private table: Int32Array;
  private mask: number;
  private count = 0;

  constructor(initialCapacity = 1024) {
    const capacity = 1 << Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.table = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
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
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    return this.insert(h1 | 0, h2 | 0);
  }

  /**
   * Adds the line held as UTF-8 in `bytes[start, end)` (`view` over the same bytes); false when
   * it was already there. Reads four bytes a step, several times faster than {@link add}. A set
   * takes lines one way only: the two ways hash the same line differently.
   */
  addBytes(bytes: Uint8Array, view: DataView, start: number, end: number): boolean {
    let h1 = 0x811c9dc5 ^ (end - start);
    let h2 = 0x9747b28c;
    let i = start;
    for (const last = end - 4; i <= last; i += 4) {
      const w = view.getInt32(i, true);
      h1 = Math.imul(h1 ^ w, 0x01000193);
      h1 ^= h1 >>> 13;
      h2 = Math.imul(h2 ^ w, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    for (; i < end; i++) {
      const b = bytes[i]!;
      h1 = Math.imul(h1 ^ b, 0x01000193);
      h2 = Math.imul(h2 ^ b, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    // Final avalanche (murmur3's fmix32), so every input bit reaches the low bits the table indexes by.
    h1 ^= h1 >>> 16;
    h1 = Math.imul(h1, 0x85ebca6b);
    h1 ^= h1 >>> 13;
    h1 = Math.imul(h1, 0xc2b2ae35);
    h1 ^= h1 >>> 16;
    h2 ^= h2 >>> 16;
    h2 = Math.imul(h2, 0x85ebca6b);
    h2 ^= h2 >>> 13;
    h2 = Math.imul(h2, 0xc2b2ae35);
    h2 ^= h2 >>> 16;
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    return this.insert(h1 | 0, h2 | 0);
  }

  private insert(h1: number, h2: number): boolean {
    // (0, 0) marks an empty slot: a line that hashes to it counts as (0, 1).
    if (h1 === 0 && h2 === 0) h2 = 1;
    const table = this.table;
    const mask = this.mask;
    let slot = (h1 ^ (h2 >>> 7)) & mask;
    // Linear probing; the table stays at most half full, so probes are short.
    for (;;) {
      const at = slot << 1;
      const a = table[at]!;
      const b = table[at + 1]!;
      if (a === 0 && b === 0) {
        table[at] = h1;
        table[at + 1] = h2;
        this.count++;
        return true;
      }
      if (a === h1 && b === h2) return false;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    this.mask = old.length - 1;
    this.count = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0 || old[i + 1] !== 0) this.insert(old[i]!, old[i + 1]!);
  }
}
