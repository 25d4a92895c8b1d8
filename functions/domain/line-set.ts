/**
 * Remembers which lines a graph already holds, in about 60 bytes a line however long the line:
 * the key is two independent 32-bit hashes (a false "seen" has odds of about 1 in 10^10 for a
 * million-line graph, traded for flat memory on large imports).
 */
export class LineSet {
  private readonly seen = new Set<string>();

  get size(): number {
    return this.seen.size;
  }

  /** Adds the line; false when it was already there. */
  add(line: string): boolean {
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    const key = `${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}.${line.length}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }
}
