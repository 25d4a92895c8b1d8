// The materialisation rules of RDFS and OWL reasoning, as data shared by the embedded engine's
// worker (plain JavaScript, copied beside each bundle) and the external-engine adapter. Each rule
// inserts `head` for every match of the triple `patterns` (across graphs) and the optional
// `filter`; each engine builds its own SPARQL Update around them.

export const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
export const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
export const OWL = 'http://www.w3.org/2002/07/owl#';
export const PREFIXES = `PREFIX rdf: <${RDF}> PREFIX rdfs: <${RDFS}> PREFIX owl: <${OWL}>`;

export const RDFS_RULES = [
  { head: '?c1 rdfs:subClassOf ?c3', patterns: ['?c1 rdfs:subClassOf ?c2', '?c2 rdfs:subClassOf ?c3'] },
  { head: '?p1 rdfs:subPropertyOf ?p3', patterns: ['?p1 rdfs:subPropertyOf ?p2', '?p2 rdfs:subPropertyOf ?p3'] },
  { head: '?x rdf:type ?c2', patterns: ['?x rdf:type ?c1', '?c1 rdfs:subClassOf ?c2'] },
  { head: '?x ?p2 ?y', patterns: ['?x ?p1 ?y', '?p1 rdfs:subPropertyOf ?p2'] },
  { head: '?x rdf:type ?c', patterns: ['?p rdfs:domain ?c', '?x ?p ?y'] },
  { head: '?y rdf:type ?c', patterns: ['?p rdfs:range ?c', '?x ?p ?y'], filter: '!isLiteral(?y)' },
];

export const OWL_RULES = [
  ...RDFS_RULES,
  { head: '?y ?q ?x', patterns: ['?p owl:inverseOf ?q', '?x ?p ?y'], filter: '!isLiteral(?y)' },
  { head: '?y ?p ?x', patterns: ['?p owl:inverseOf ?q', '?x ?q ?y'], filter: '!isLiteral(?y)' },
  { head: '?y ?p ?x', patterns: ['?p rdf:type owl:SymmetricProperty', '?x ?p ?y'], filter: '!isLiteral(?y)' },
  { head: '?x ?p ?z', patterns: ['?p rdf:type owl:TransitiveProperty', '?x ?p ?y', '?y ?p ?z'] },
  { head: '?y owl:sameAs ?x', patterns: ['?x owl:sameAs ?y'] },
  { head: '?x owl:sameAs ?z', patterns: ['?x owl:sameAs ?y', '?y owl:sameAs ?z'] },
  { head: '?y ?p ?o', patterns: ['?x owl:sameAs ?y', '?x ?p ?o'], filter: '?p != owl:sameAs' },
  { head: '?s ?p ?y', patterns: ['?x owl:sameAs ?y', '?s ?p ?x'], filter: '?p != owl:sameAs' },
  { head: '?a rdfs:subClassOf ?b', patterns: ['?a owl:equivalentClass ?b'] },
  { head: '?a rdfs:subClassOf ?b', patterns: ['?b owl:equivalentClass ?a'] },
  { head: '?a rdfs:subPropertyOf ?b', patterns: ['?a owl:equivalentProperty ?b'] },
  { head: '?a rdfs:subPropertyOf ?b', patterns: ['?b owl:equivalentProperty ?a'] },
];

/** The rules of a reasoner level: `None`, `RDFS` or `OWL`. */
export function rulesFor(level) {
  return level === 'OWL' ? OWL_RULES : level === 'RDFS' ? RDFS_RULES : [];
}
