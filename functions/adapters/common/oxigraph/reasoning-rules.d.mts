export interface ReasoningRule {
  head: string;
  patterns: string[];
  filter?: string;
}
export declare const RDF: string;
export declare const RDFS: string;
export declare const OWL: string;
export declare const PREFIXES: string;
export declare const RDFS_RULES: ReasoningRule[];
export declare const OWL_RULES: ReasoningRule[];
export declare function rulesFor(level: 'None' | 'RDFS' | 'OWL'): ReasoningRule[];
