/**
 * The `config` of a text search service (spec: "Search service configuration"): index templates
 * and component templates as Elasticsearch writes them. Each broken rule is a 400 naming the field.
 */
import { FIELD_TYPES, type FieldType, type SearchMappings, type SearchServiceConfig } from '../../ports/search-index.js';
import { ValidationError } from '../shared/errors.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function onlyKeys(value: Record<string, unknown>, allowed: string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ValidationError(`${where}.${key}: not a field of ${where.replace(/\[\d+\]$/, '[]')}; allowed: ${allowed.join(', ')}.`);
  }
}

function templateName(value: unknown, where: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/.test(value)) {
    throw new ValidationError(`${where}.name: required; 1 to 100 letters, digits, '-' or '_'.`);
  }
  return value;
}

/** Field definitions of `mappings.properties`: property IRI (dots written as spaces, or not) → {type}. */
function mappingProperties(value: unknown, where: string): SearchMappings {
  if (!isObject(value)) throw new ValidationError(`${where}: must be an object of property IRI → field definition, such as {"https://schema org/dateCreated": {"type": "date"}}.`);
  const out: SearchMappings = {};
  for (const [iri, definition] of Object.entries(value)) {
    const at = `${where}["${iri}"]`;
    if (!iri.trim()) throw new ValidationError(`${at}: a property name is empty.`);
    if (!isObject(definition)) throw new ValidationError(`${at}: must be a field definition object such as {"type": "date"}.`);
    onlyKeys(definition, ['type', 'format', 'fields', 'index', 'ignore_malformed', 'analyzer'], at);
    if (!FIELD_TYPES.includes(definition.type as FieldType)) {
      throw new ValidationError(`${at}.type: "${String(definition.type)}" is not a field type offered here; use one of ${FIELD_TYPES.join(', ')}.`);
    }
    // Elasticsearch reads dots as object paths: the documents write them as spaces (fieldName).
    out[fieldName(iri)] = { type: definition.type as FieldType };
  }
  return out;
}

/** A property IRI as a field name: every `.` written as a space (TriplyDB's reply format). */
export const fieldName = (iri: string): string => iri.replaceAll('.', ' ');

/** Validates a create body's `config` for a search service (null/undefined: no templates). */
export function searchConfigOf(config: unknown): SearchServiceConfig {
  if (config === undefined || config === null) return { indexTemplates: [], componentTemplates: [] };
  if (!isObject(config)) throw new ValidationError('config: must be an object holding indexTemplates and/or componentTemplates.');
  onlyKeys(config, ['indexTemplates', 'componentTemplates'], 'config');
  const rawIndex = config.indexTemplates ?? [];
  const rawComponents = config.componentTemplates ?? [];
  if (!Array.isArray(rawIndex)) throw new ValidationError('config.indexTemplates: must be an array of index templates.');
  if (!Array.isArray(rawComponents)) throw new ValidationError('config.componentTemplates: must be an array of component templates.');
  const componentTemplates = rawComponents.map((raw: unknown, i) => {
    const where = `config.componentTemplates[${i}]`;
    if (!isObject(raw)) throw new ValidationError(`${where}: must be an object with name and template.`);
    onlyKeys(raw, ['name', 'template'], where);
    const name = templateName(raw.name, where);
    if (!isObject(raw.template)) throw new ValidationError(`${where}.template: required; an object holding mappings.properties.`);
    onlyKeys(raw.template, ['mappings', 'settings'], `${where}.template`);
    const template: SearchServiceConfig['componentTemplates'][number]['template'] = {};
    if (raw.template.mappings !== undefined) {
      if (!isObject(raw.template.mappings)) throw new ValidationError(`${where}.template.mappings: must be an object holding properties.`);
      onlyKeys(raw.template.mappings, ['properties', 'dynamic', 'date_detection', 'numeric_detection'], `${where}.template.mappings`);
      template.mappings = { properties: mappingProperties(raw.template.mappings.properties, `${where}.template.mappings.properties`) };
    }
    if (raw.template.settings !== undefined) {
      if (!isObject(raw.template.settings)) throw new ValidationError(`${where}.template.settings: must be an object.`);
      template.settings = raw.template.settings;
    }
    if (!template.mappings) throw new ValidationError(`${where}.template.mappings: required; give mappings.properties (property IRI → field definition).`);
    return { name, template };
  });
  const names = new Set<string>();
  for (const [i, c] of componentTemplates.entries()) {
    if (names.has(c.name)) throw new ValidationError(`config.componentTemplates[${i}].name: "${c.name}" is given twice.`);
    names.add(c.name);
  }
  const indexTemplates = rawIndex.map((raw: unknown, i) => {
    const where = `config.indexTemplates[${i}]`;
    if (!isObject(raw)) throw new ValidationError(`${where}: must be an object with name and index_patterns.`);
    onlyKeys(raw, ['name', 'index_patterns', 'composed_of', 'priority', 'template'], where);
    const name = templateName(raw.name, where);
    if (raw.index_patterns === undefined) throw new ValidationError(`${where}.index_patterns: required; must be "index".`);
    if (raw.index_patterns !== 'index') throw new ValidationError(`${where}.index_patterns: must be "index" (the service's one index).`);
    if (raw.template !== undefined) throw new ValidationError(`${where}.template: mappings go in a component template listed in composed_of.`);
    let composed: string[] | undefined;
    if (raw.composed_of !== undefined) {
      if (!Array.isArray(raw.composed_of) || raw.composed_of.some((n) => typeof n !== 'string')) {
        throw new ValidationError(`${where}.composed_of: must be an array of component template names.`);
      }
      composed = raw.composed_of as string[];
      for (const n of composed) {
        if (!names.has(n)) throw new ValidationError(`${where}.composed_of: "${n}" is not a component template of this request; component templates are created together with the index template.`);
      }
    }
    return { name, index_patterns: 'index' as const, ...(composed ? { composed_of: composed } : {}) };
  });
  if (indexTemplates.length > 1) throw new ValidationError('config.indexTemplates: one index template at most (the service has one index).');
  if (componentTemplates.length > 0) {
    if (indexTemplates.length === 0) {
      throw new ValidationError('config.indexTemplates: required with componentTemplates; a component template can only be created together with an index template that lists it in composed_of.');
    }
    const listed = new Set(indexTemplates.flatMap((t) => t.composed_of ?? []));
    for (const [i, c] of componentTemplates.entries()) {
      if (!listed.has(c.name)) throw new ValidationError(`config.indexTemplates[0].composed_of: must list the component template "${c.name}" (config.componentTemplates[${i}]).`);
    }
  }
  return { indexTemplates, componentTemplates };
}

/** The mapping an index gets: its index template's component templates, later ones winning. */
export function mappingsOf(config: SearchServiceConfig | undefined): SearchMappings {
  const out: SearchMappings = {};
  const components = new Map((config?.componentTemplates ?? []).map((c) => [c.name, c]));
  for (const t of config?.indexTemplates ?? []) {
    for (const name of t.composed_of ?? []) Object.assign(out, components.get(name)?.template.mappings?.properties ?? {});
  }
  return out;
}
