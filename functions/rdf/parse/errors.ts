/** How the RDF parsers report malformed input: RdfSyntaxError, and the positions in oxigraph's messages. */

/** Malformed input. `message` reads like `pets.ttl: syntax error at line 3, column 14: <detail>`. */
export class RdfSyntaxError extends Error {
  readonly line?: number;
  readonly column?: number;
  readonly fileName?: string;
  /** What went wrong, without file name and position. */
  readonly detail: string;
  /** `syntax error`, or e.g. `unsupported JSON-LD`. */
  readonly kind: string;

  constructor(detail: string, where: { line?: number; column?: number; fileName?: string; kind?: string } = {}) {
    const kind = where.kind ?? 'syntax error';
    let at = '';
    if (where.line !== undefined) at = where.column !== undefined ? ` at line ${where.line}, column ${where.column}` : ` at line ${where.line}`;
    super(`${where.fileName ? `${where.fileName}: ` : ''}${kind}${at}: ${detail}`);
    this.name = 'RdfSyntaxError';
    this.detail = detail;
    this.kind = kind;
    if (where.line !== undefined) this.line = where.line;
    if (where.column !== undefined) this.column = where.column;
    if (where.fileName !== undefined) this.fileName = where.fileName;
  }
}

/**
 * oxigraph messages: `Parser error at line 1 column 48: ...`,
 * `Parser error at line 4 between columns 16 and 20: ...`,
 * `Parser error between line 2 column 23 and line 3 column 1: ...`, or no position at all.
 */
export function parseOxigraphMessage(message: string): { detail: string; line?: number; column?: number } {
  const m =
    /^Parser error (?:at line (\d+) (?:column (\d+)|between columns (\d+) and (?:column )?\d+)|between line (\d+) column (\d+) and line \d+ column \d+): ([\s\S]*)$/.exec(message);
  if (!m) return { detail: message };
  const line = Number(m[1] ?? m[4]);
  const column = Number(m[2] ?? m[3] ?? m[5]);
  return { detail: m[6]!, line, column };
}
