/**
 * The fast path of N-Triples and N-Quads parsing: most lines of real files are already in the
 * platform's canonical form (nt.ts), and a line in that form is its own output. This recognizer
 * accepts exactly such lines — single spaces, absolute IRIs with no character that needs
 * escaping, blank node labels of [A-PR-Za-z0-9], literals whose only escapes are `\" \\ \n \r`,
 * lower-case language tags, a final ` .` — and returns their terms, as N3 plus the converter of
 * nt.ts would. Anything else (other escapes, comments, tabs, relative IRIs, errors, ...) returns
 * null and goes to N3, which decides and reports with line and column (n3-stream.ts).
 */
import { XSD_STRING, RDF_LANG_STRING, RDF_DIR_LANG_STRING, type NtQuad } from '../nt.js';

const XSD_STRING_SUFFIX = `^^<${XSD_STRING}>`;
const LANG_STRING_SUFFIX = `^^<${RDF_LANG_STRING}>`;
const DIR_LANG_STRING_SUFFIX = `^^<${RDF_DIR_LANG_STRING}>`;

// One regular expression for the whole line: V8 compiles it to machine code, several times
// faster than scanning characters in JavaScript.
/** An absolute IRI with no character outside IRIREF (U+0000–U+0020 < > " { } | ^ ` \). */
const IRI = '<[A-Za-z][A-Za-z0-9+.\\-]*:[^\\x00-\\x20<>"{}|^`\\\\]*>';
/** A blank node whose label sanitizeBlankLabel keeps as it is. */
const BLANK = '_:[A-PR-Za-z0-9]+';
/** A literal with canonical escapes only, a lower-case language tag (no direction) or a datatype. */
const LITERAL = `"(?:[^"\\\\\\r\\n]|\\\\["\\\\nr])*"(?:@[a-z]+(?:-[a-z0-9]+)*|\\^\\^${IRI})?`;
const CANONICAL_LINE = new RegExp(`(${IRI}|${BLANK}) (${IRI}) (${IRI}|${BLANK}|${LITERAL})(?: (${IRI}|${BLANK}))? \\.`, 'y');

/**
 * Reads canonical lines. `read(text, start, end)` looks at `text[start, end)` (one line without
 * its `\n`) and returns its statement, or null when the line is not in the simple canonical form.
 */
export function makeFastLineReader(blankNodePrefix: string, quads: boolean): (text: string, start: number, end: number) => NtQuad | null {
  const line = new RegExp(CANONICAL_LINE.source, 'y');
  const named = `_:${blankNodePrefix}`;
  const blank = (term: string) => (term.charCodeAt(0) === 95 /* _ */ ? `${named}${term.slice(2)}` : term);
  return (text, start, end) => {
    line.lastIndex = start;
    const m = line.exec(text);
    if (m === null || line.lastIndex !== end) return null;
    let object = m[3]!;
    const graph = m[4];
    if (graph !== undefined && !quads) return null;
    const o = object.charCodeAt(0);
    if (o === 95) object = blank(object);
    else if (o === 34 /* " */ && object.charCodeAt(object.length - 1) === 62 /* > */) {
      // xsd:string is implied; rdf:langString and rdf:dirLangString need a language tag (N3 says so).
      if (object.endsWith(XSD_STRING_SUFFIX)) object = object.slice(0, object.length - XSD_STRING_SUFFIX.length);
      else if (object.endsWith(LANG_STRING_SUFFIX) || object.endsWith(DIR_LANG_STRING_SUFFIX)) return null;
    }
    return { subject: blank(m[1]!), predicate: m[2]!, object, graph: graph === undefined ? null : blank(graph) };
  };
}
