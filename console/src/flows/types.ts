/** A flow definition as the API stores it (statemachines/README.md documents the format). */
export interface Task {
  id: string;
  label: string;
  type: string;
  settings: Record<string, unknown>;
  timeoutSeconds?: number;
}
export interface Variable {
  name: string;
  description: string;
  required: boolean;
  allowedOptions: string[];
}
export interface Preset {
  name: string;
  values: Record<string, string>;
  default: boolean;
}
export interface Definition {
  formatVersion: 1;
  id: string;
  name: string;
  description: string;
  accessLevel: string;
  tasks: Task[];
  connections: { from: string; to: string }[];
  variables: Variable[];
  outputVariables: { name: string; description: string }[];
  maskedValues: { name: string; description: string }[];
  presets: Preset[];
}

export const emptyDefinition = (id: string, name: string): Definition => ({
  formatVersion: 1,
  id,
  name,
  description: '',
  accessLevel: 'Private',
  tasks: [],
  connections: [],
  variables: [],
  outputVariables: [],
  maskedValues: [],
  presets: [],
});

/** `a = b` lines ⇄ an object of texts. */
export const mapToText = (m: unknown): string =>
  m && typeof m === 'object' ? Object.entries(m as Record<string, unknown>).map(([k, v]) => `${k} = ${String(v)}`).join('\n') : '';
export function textToMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}
