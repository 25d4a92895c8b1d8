/**
 * Checks made before the JSON-LD and RDF/XML parsers read a file: linear scans that refuse what
 * would make them explode (nesting depth, entity expansion), and the end-of-document check
 * oxigraph's RDF/XML parser lacks.
 */

/** Limits of the checks made before a JSON-LD or RDF/XML parser reads a file. */
export interface ParseLimits {
  /** Objects and arrays nested in a JSON-LD document (oxigraph's stack overflows near 1,000). */
  maxJsonLdDepth: number;
  /** Elements nested in an RDF/XML document (oxigraph slows down quadratically with depth). */
  maxXmlDepth: number;
  /** Characters of all entity values an RDF/XML DOCTYPE declares together. */
  maxEntityDeclarationChars: number;
  /** Characters entity references may expand to within one text node or tag. */
  maxEntityExpansionChars: number;
  /** Characters of the prolog (XML declaration, comments, DOCTYPE) read before the root element. */
  maxPrologChars: number;
  /** Whether an entity's value may refer to other entities (how "billion laughs" multiplies). */
  entitiesMayReferToEntities: boolean;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  maxJsonLdDepth: 256,
  maxXmlDepth: 1000,
  maxEntityDeclarationChars: 64 * 1024,
  maxEntityExpansionChars: 16 * 1024 * 1024,
  maxPrologChars: 1024 * 1024,
  entitiesMayReferToEntities: false,
};

interface GuardProblem {
  detail: string;
  line?: number;
}

/**
 * Follows the nesting of `{` and `[` outside strings in a JSON byte stream (linear, any chunking)
 * and reports when it passes the limit.
 */
export class JsonDepthGuard {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private line = 1;

  constructor(private readonly maxDepth: number) {}

  push(bytes: Uint8Array): GuardProblem | null {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === 0x0a) this.line++;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) this.inString = false;
      } else if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) {
        if (++this.depth > this.maxDepth) {
          return {
            detail: `objects and arrays are nested more than ${this.maxDepth} levels deep; this platform reads at most ${this.maxDepth} levels: flatten the document (give nested nodes an "@id" and list them at the top level)`,
            line: this.line,
          };
        }
      } else if (b === 0x7d || b === 0x5d) this.depth--;
    }
    return null;
  }

  end(): GuardProblem | null {
    return null;
  }
}

const PREDEFINED_XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

/**
 * Reads the DOCTYPE of an RDF/XML byte stream before the parser does and refuses what makes
 * entity expansion explode ("billion laughs"): entities that refer to other entities, parameter
 * and external entities, more than a small total of declared text, and (when entities are
 * declared) references that expand to more than a bound within one text node or tag.
 */
export class XmlEntityGuard {
  private readonly decoder = new TextDecoder('utf-8');
  private prolog: string | null = '';
  private readonly entities = new Map<string, number>();
  private carry = '';
  private expansion = 0;

  constructor(private readonly limits: ParseLimits) {}

  push(bytes: Uint8Array): GuardProblem | null {
    const text = this.decoder.decode(bytes, { stream: true });
    if (this.prolog !== null) {
      this.prolog += text;
      if (this.prolog.length > this.limits.maxPrologChars) {
        return { detail: `the XML declaration, comments and DOCTYPE before the root element are longer than ${this.limits.maxPrologChars} characters` };
      }
      return this.readProlog(false);
    }
    // XML allows a DOCTYPE only before the root element; the parser may still read one later.
    const late = this.lateDoctype(text);
    if (late) return late;
    return this.entities.size === 0 ? null : this.countReferences(text);
  }

  /** The tail of the previous chunk, so a `<!DOCTYPE` split over two chunks is seen. */
  private tail = '';

  private lateDoctype(text: string): GuardProblem | null {
    const window = this.tail + text;
    this.tail = window.slice(-8);
    return /<!doctype/i.test(window) ? { detail: 'a DOCTYPE after the root element started; XML allows one only before it' } : null;
  }

  end(): GuardProblem | null {
    if (this.prolog !== null) return this.readProlog(true);
    return null;
  }

  /** Walks the prolog once it is complete (up to the root element's `<`). */
  private readProlog(final: boolean): GuardProblem | null {
    const text = this.prolog!;
    let pos = 0;
    for (;;) {
      while (pos < text.length && /[\s\uFEFF]/.test(text[pos]!)) pos++;
      if (pos >= text.length) break;
      let end: number;
      if (text.startsWith('<?', pos)) end = after(text.indexOf('?>', pos + 2), 2);
      else if (text.startsWith('<!--', pos)) end = after(text.indexOf('-->', pos + 4), 3);
      else if (text.slice(pos, pos + 9).toUpperCase() === '<!DOCTYPE') {
        end = doctypeEnd(text, pos);
        if (end >= 0) {
          const problem = this.readDoctype(text.slice(pos, end));
          if (problem) return problem;
        }
      } else if (text.length - pos < 9 && '<!DOCTYPE'.startsWith(text.slice(pos).toUpperCase()) && !final) end = -1;
      else {
        // The root element (or something the parser will refuse): the prolog is over.
        this.prolog = null;
        const late = this.lateDoctype(text.slice(pos));
        if (late) return late;
        return this.entities.size > 0 ? this.countReferences(text.slice(pos)) : null;
      }
      if (end < 0) {
        if (text.length > this.limits.maxPrologChars) {
          return { detail: `the XML declaration, comments and DOCTYPE before the root element are longer than ${this.limits.maxPrologChars} characters` };
        }
        if (!final) return null;
        break;
      }
      pos = end;
    }
    if (final) this.prolog = null;
    return null;
  }

  private readDoctype(doctype: string): GuardProblem | null {
    const declarations = doctype.match(/<!ENTITY(?:[^"'>]|"[^"]*"|'[^']*')*>/g) ?? [];
    const advice = 'this platform refuses entity declarations that could expand without bound (a "billion laughs" attack); declare each entity as plain text';
    let total = 0;
    for (const declaration of declarations) {
      const m = /^<!ENTITY\s+(%\s+)?([^\s"'>%]+)\s+(?:"([^"]*)"|'([^']*)'|(SYSTEM|PUBLIC)\b)/.exec(declaration);
      if (!m) return { detail: `cannot read the entity declaration ${JSON.stringify(declaration.slice(0, 80))}; ${advice}` };
      const name = m[2]!;
      if (m[1]) return { detail: `the DOCTYPE declares the parameter entity "%${name}"; ${advice}` };
      if (m[5]) return { detail: `the DOCTYPE declares the external entity "${name}" (${m[5]}); external entities are not read: put its text in the declaration` };
      const value = m[3] ?? m[4] ?? '';
      // Every reference in the value, not only the first (`&amp;&a;&a;` hides `&a;` behind `&amp;`).
      for (const reference of value.matchAll(/&([^#;\s][^;\s]*);|%([^;\s]+);/g)) {
        if (reference[1] && PREDEFINED_XML_ENTITIES.has(reference[1])) continue;
        if (this.limits.entitiesMayReferToEntities) break;
        return { detail: `the entity "${name}" refers to the entity "${reference[1] ?? `%${reference[2]}`}"; ${advice}` };
      }
      total += value.length;
      if (total > this.limits.maxEntityDeclarationChars) {
        return { detail: `the DOCTYPE declares entities of more than ${this.limits.maxEntityDeclarationChars} characters in total; ${advice}` };
      }
      this.entities.set(name, value.length);
    }
    return null;
  }

  /** Adds up what declared entities expand to between one `<` and the next. */
  private countReferences(chunk: string): GuardProblem | null {
    const text = this.carry + chunk;
    this.carry = '';
    let pos = 0;
    for (;;) {
      const amp = text.indexOf('&', pos);
      const lt = text.indexOf('<', pos);
      if (lt >= 0 && (amp < 0 || lt < amp)) {
        this.expansion = 0;
        pos = lt + 1;
        continue;
      }
      if (amp < 0) return null;
      const semicolon = text.indexOf(';', amp);
      if (semicolon < 0) {
        // A reference may continue in the next chunk.
        if (text.length - amp < 256) this.carry = text.slice(amp);
        return null;
      }
      const size = this.entities.get(text.slice(amp + 1, semicolon));
      if (size !== undefined) {
        this.expansion += size;
        if (this.expansion > this.limits.maxEntityExpansionChars) {
          return { detail: `entity references expand to more than ${this.limits.maxEntityExpansionChars} characters in one text or tag; ${'write the text out instead of repeating entities'}` };
        }
      }
      pos = amp + 1;
    }
  }
}

/** Position after the DOCTYPE starting at `start` (quotes and the `[...]` subset skipped), or -1. */
function doctypeEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start + 2; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 || c === 39) {
      const close = text.indexOf(text[i]!, i + 1);
      if (close < 0) return -1;
      i = close;
    } else if (c === 91) depth++;
    else if (c === 93) depth--;
    else if (c === 62 && depth <= 0) return i + 1;
  }
  return -1;
}

/**
 * Follows the element nesting of an XML byte stream that oxigraph has already checked for
 * everything else (tags, attributes, comments, CDATA, PIs, DOCTYPE) and says, at the end,
 * whether the document was complete: a root element, and every element closed.
 */
export class XmlEndCheck {
  private readonly decoder = new TextDecoder('utf-8');
  private carry = '';
  private readonly open: string[] = [];
  private root = false;
  private line = 1;
  private column0 = 0;

  /** Elements open at the end of what was pushed so far. */
  get depth(): number {
    return this.open.length;
  }

  /** Where the text checked so far ends. */
  get position(): { line: number; column: number } {
    return { line: this.line, column: this.column0 + 1 };
  }

  push(bytes: Uint8Array): void {
    this.scan(this.carry + this.decoder.decode(bytes, { stream: true }), false);
  }

  end(): { detail: string; line: number; column: number } | null {
    this.scan(this.carry + this.decoder.decode(), true);
    const at = { line: this.line, column: this.column0 + 1 };
    if (this.open.length > 0) {
      return { detail: `unexpected end of input: element <${this.open[this.open.length - 1]}> is not closed`, ...at };
    }
    if (!this.root) return { detail: 'no root element: an RDF/XML document needs one (e.g. <rdf:RDF>)', ...at };
    return null;
  }

  private scan(text: string, final: boolean): void {
    let pos = 0;
    let done = text.length;
    for (;;) {
      const lt = text.indexOf('<', pos);
      if (lt < 0) break;
      const end = this.constructEnd(text, lt);
      if (end < 0) {
        // Incomplete construct at the end of this chunk: keep it for the next one.
        if (!final) done = lt;
        break;
      }
      pos = end;
    }
    this.carry = text.slice(done);
    this.advance(text, done);
  }

  /** Position after the construct starting with `<` at `lt`, or -1 if it continues beyond `text`. */
  private constructEnd(text: string, lt: number): number {
    const next = text.charCodeAt(lt + 1);
    if (Number.isNaN(next)) return -1;
    if (next === 33 /* ! */) {
      if (text.length < lt + 9 && !text.startsWith('<!--', lt) && !text.startsWith('<![CDATA[', lt)) {
        // not enough text to tell a comment or CDATA from a DOCTYPE
        if ('<!--'.startsWith(text.slice(lt, lt + 4)) || '<![CDATA['.startsWith(text.slice(lt, lt + 9))) return -1;
      }
      if (text.startsWith('<!--', lt)) return after(text.indexOf('-->', lt + 4), 3);
      if (text.startsWith('<![CDATA[', lt)) return after(text.indexOf(']]>', lt + 9), 3);
      // DOCTYPE (possibly with an internal subset in [...])
      return doctypeEnd(text, lt);
    }
    if (next === 63 /* ? */) return after(text.indexOf('?>', lt + 2), 2);
    if (next === 47 /* / */) {
      const gt = text.indexOf('>', lt + 2);
      if (gt < 0) return -1;
      this.open.pop();
      return gt + 1;
    }
    // start tag: find the '>' outside attribute values
    for (let i = lt + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 34 || c === 39) {
        const close = text.indexOf(text[i]!, i + 1);
        if (close < 0) return -1;
        i = close;
      } else if (c === 62) {
        if (text.charCodeAt(i - 1) !== 47 /* / */) this.open.push(/^<([^\s/>]+)/.exec(text.slice(lt, i + 1))?.[1] ?? '?');
        this.root = true;
        return i + 1;
      }
    }
    return -1;
  }

  private advance(text: string, upTo: number): void {
    let last = -1;
    for (let i = text.indexOf('\n'); i >= 0 && i < upTo; i = text.indexOf('\n', i + 1)) {
      this.line++;
      last = i;
    }
    this.column0 = last < 0 ? this.column0 + upTo : upTo - last - 1;
  }
}

function after(index: number, length: number): number {
  return index < 0 ? -1 : index + length;
}
