import { useState, type ReactNode } from 'react';
import { api, enc, type Problem } from '../api';
import { ErrorLine, useAction, useLoad } from '../ui';
import { getPath, setPath, typeInfo, type Field } from './catalogue';
import { mapToText, textToMap, type Definition, type Preset, type Task, type Variable } from './types';

let uid = 0;
const nextId = () => `f${++uid}`;

/** One labelled field whose value is committed when it loses focus (so Undo takes whole edits back). */
function FieldInput({ field, value, problems, onCommit }: { field: Field; value: unknown; problems: Problem[]; onCommit: (v: unknown) => void }) {
  const [id] = useState(nextId);
  const [jsonError, setJsonError] = useState<string>();
  const described = problems.length || field.hint || jsonError ? `${id}-d` : undefined;
  let input: ReactNode;
  const common = { id, 'aria-describedby': described, 'aria-invalid': problems.length > 0 || undefined, required: field.required };
  if (field.kind === 'select') {
    input = (
      <select {...common} value={value === undefined ? '' : String(value)} onChange={(e) => onCommit(e.target.value || undefined)}>
        {(field.options ?? []).map((o) => (
          <option key={o} value={o}>
            {o || '(none)'}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'checkbox') {
    input = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onCommit(e.target.checked || undefined)} />;
  } else if (field.kind === 'map') {
    input = <textarea {...common} rows={3} defaultValue={mapToText(value)} onBlur={(e) => onCommit(textToMap(e.target.value))} />;
  } else if (field.kind === 'json') {
    input = (
      <textarea
        {...common}
        rows={5}
        className="editor"
        defaultValue={value === undefined ? '' : JSON.stringify(value, null, 2)}
        onBlur={(e) => {
          if (!e.target.value.trim()) return onCommit(undefined);
          try {
            onCommit(JSON.parse(e.target.value));
            setJsonError(undefined);
          } catch (err) {
            setJsonError(`Not JSON: ${(err as Error).message}`);
          }
        }}
      />
    );
  } else if (field.kind === 'textarea') {
    input = <textarea {...common} rows={5} className="editor" defaultValue={value === undefined ? '' : String(value)} onBlur={(e) => onCommit(e.target.value)} />;
  } else {
    input = (
      <input
        {...common}
        type={field.kind === 'number' ? 'number' : 'text'}
        defaultValue={value === undefined ? '' : String(value)}
        onBlur={(e) => onCommit(field.kind === 'number' && e.target.value !== '' ? Number(e.target.value) : e.target.value)}
      />
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>
        {field.label}
        {field.required ? ' (required)' : ''}
      </label>
      {input}
      {described ? (
        <div id={described}>
          {field.hint ? <div className="hint">{field.hint}</div> : null}
          {jsonError ? <div className="error">{jsonError}</div> : null}
          {problems.map((p, i) => (
            <div key={i} className="error" role="alert">
              {p.message}
            </div>
          ))}
        </div>
      ) : null}
    </div>
  );
}

/** The settings form of one task, from its type's fields in the catalogue. */
export function TaskForm({
  task,
  def,
  problems,
  onChange,
  onRemove,
  onConnections,
}: {
  task: Task;
  def: Definition;
  problems: Problem[];
  onChange: (t: Task) => void;
  onRemove: () => void;
  /** Replaces the flow's connections (the keyboard's way to connect tasks). */
  onConnections: (connections: Definition['connections']) => void;
}) {
  const info = typeInfo(task.type);
  const index = def.tasks.findIndex((t) => t.id === task.id);
  const prefix = `tasks[${index}].settings.`;
  const at = (path: string) => problems.filter((p) => p.path === `${prefix}${path}` || p.path.startsWith(`${prefix}${path}.`) || p.path.startsWith(`${prefix}${path}[`));
  const shown = new Set((info?.fields ?? []).flatMap((f) => at(f.path)));
  const other = problems.filter((p) => !shown.has(p));
  // Remount on outside changes (undo) so uncommitted inputs show the definition again.
  const version = JSON.stringify(task);
  return (
    <form key={version} onSubmit={(e) => e.preventDefault()} aria-label={`Settings of ${task.label}`}>
      <h2>
        {info?.title ?? task.type}: {task.id}
      </h2>
      {other.map((p, i) => (
        <p key={i} className="error" role="alert">
          {p.path.startsWith(prefix) ? <code>{p.path.slice(prefix.length)}</code> : null} {p.message}
        </p>
      ))}
      <FieldInput field={{ path: 'label', label: 'Label', kind: 'text', required: true }} value={task.label} problems={[]} onCommit={(v) => onChange({ ...task, label: String(v ?? '') })} />
      <FieldInput
        field={{ path: 'timeoutSeconds', label: 'Timeout (seconds)', kind: 'number' }}
        value={task.timeoutSeconds}
        problems={problems.filter((p) => p.path === `tasks[${index}].timeoutSeconds`)}
        onCommit={(v) => onChange({ ...task, timeoutSeconds: v === '' || v === undefined ? undefined : Number(v) })}
      />
      {(info?.fields ?? []).map((f) => (
        <FieldInput key={f.path} field={f} value={getPath(task.settings, f.path)} problems={at(f.path)} onCommit={(v) => onChange({ ...task, settings: setPath(task.settings, f.path, v) })} />
      ))}
      <FieldInput
        field={{ path: '', label: 'All settings (JSON)', kind: 'json' }}
        value={task.settings}
        problems={[]}
        onCommit={(v) => onChange({ ...task, settings: v && typeof v === 'object' ? (v as Record<string, unknown>) : {} })}
      />
      <fieldset>
        <legend>Next tasks (connections from {task.id})</legend>
        {def.tasks
          .filter((t) => t.id !== task.id)
          .map((t) => {
            const on = def.connections.some((c) => c.from === task.id && c.to === t.id);
            return (
              <label key={t.id} className="inline">
                <input
                  type="checkbox"
                  checked={on}
                  onChange={() =>
                    onConnections(on ? def.connections.filter((c) => !(c.from === task.id && c.to === t.id)) : [...def.connections, { from: task.id, to: t.id }])
                  }
                />
                Connect to {t.label} ({t.id})
              </label>
            );
          })}
      </fieldset>
      <button type="button" onClick={onRemove}>
        Remove task
      </button>
    </form>
  );
}

/** The flow's own settings: name, description, access level, variables, output variables, presets. */
export function FlowPanel({ def, base, onChange }: { def: Definition; base: string; onChange: (d: Definition) => void }) {
  const setVar = (i: number, v: Partial<Variable>) => onChange({ ...def, variables: def.variables.map((x, j) => (j === i ? { ...x, ...v } : x)) });
  const setPreset = (i: number, p: Partial<Preset>) =>
    onChange({ ...def, presets: def.presets.map((x, j) => (j === i ? { ...x, ...p } : p.default ? { ...x, default: false } : x)) });
  return (
    <form key={JSON.stringify(def)} onSubmit={(e) => e.preventDefault()} aria-label="Flow settings">
      <h2>Flow</h2>
      <FieldInput field={{ path: 'name', label: 'Name', kind: 'text', required: true }} value={def.name} problems={[]} onCommit={(v) => onChange({ ...def, name: String(v ?? '') })} />
      <FieldInput field={{ path: 'description', label: 'Description', kind: 'textarea' }} value={def.description} problems={[]} onCommit={(v) => onChange({ ...def, description: String(v ?? '') })} />
      <FieldInput
        field={{ path: 'accessLevel', label: 'Access level', kind: 'select', options: ['Private', 'Internal'] }}
        value={def.accessLevel}
        problems={[]}
        onCommit={(v) => onChange({ ...def, accessLevel: String(v) })}
      />
      <h3>Variables</h3>
      {def.variables.map((v, i) => (
        <fieldset key={i}>
          <legend>Variable {v.name || i + 1}</legend>
          <FieldInput field={{ path: 'name', label: 'Variable name', kind: 'text' }} value={v.name} problems={[]} onCommit={(x) => setVar(i, { name: String(x ?? '') })} />
          <FieldInput field={{ path: 'description', label: 'Variable description', kind: 'text' }} value={v.description} problems={[]} onCommit={(x) => setVar(i, { description: String(x ?? '') })} />
          <FieldInput field={{ path: 'required', label: 'Required', kind: 'checkbox' }} value={v.required} problems={[]} onCommit={(x) => setVar(i, { required: x === true })} />
          <FieldInput
            field={{ path: 'allowedOptions', label: 'Allowed values (comma-separated, empty for any)', kind: 'text' }}
            value={v.allowedOptions.join(', ')}
            problems={[]}
            onCommit={(x) => setVar(i, { allowedOptions: String(x ?? '').split(',').map((s) => s.trim()).filter(Boolean) })}
          />
          <button type="button" onClick={() => onChange({ ...def, variables: def.variables.filter((_, j) => j !== i) })}>
            Remove variable {v.name}
          </button>
        </fieldset>
      ))}
      <button type="button" onClick={() => onChange({ ...def, variables: [...def.variables, { name: `var${def.variables.length + 1}`, description: '', required: false, allowedOptions: [] }] })}>
        Add variable
      </button>
      <h3>Output variables</h3>
      <FieldInput
        field={{ path: 'outputVariables', label: 'Output variable names (comma-separated)', kind: 'text' }}
        value={def.outputVariables.map((o) => o.name).join(', ')}
        problems={[]}
        onCommit={(x) =>
          onChange({
            ...def,
            outputVariables: String(x ?? '')
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
              .map((name) => def.outputVariables.find((o) => o.name === name) ?? { name, description: '' }),
          })
        }
      />
      <h3>Masked values</h3>
      <FieldInput
        field={{ path: 'maskedValues', label: 'Masked value names (comma-separated)', kind: 'text', hint: 'Secrets tasks use as ?name; their values are set below once the flow is saved, and never shown again.' }}
        value={def.maskedValues.map((m) => m.name).join(', ')}
        problems={[]}
        onCommit={(x) =>
          onChange({
            ...def,
            maskedValues: String(x ?? '')
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
              .map((name) => def.maskedValues.find((m) => m.name === name) ?? { name, description: '' }),
          })
        }
      />
      <MaskedValues base={base} />
      <h3>Presets</h3>
      {def.presets.map((p, i) => (
        <fieldset key={i}>
          <legend>Preset {p.name}</legend>
          <FieldInput field={{ path: 'name', label: 'Preset name', kind: 'text' }} value={p.name} problems={[]} onCommit={(x) => setPreset(i, { name: String(x ?? '') })} />
          <FieldInput field={{ path: 'values', label: 'Preset values (name = value, one a line)', kind: 'map' }} value={p.values} problems={[]} onCommit={(x) => setPreset(i, { values: x as Record<string, string> })} />
          <FieldInput field={{ path: 'default', label: 'Default preset', kind: 'checkbox' }} value={p.default} problems={[]} onCommit={(x) => setPreset(i, { default: x === true })} />
          <button type="button" onClick={() => onChange({ ...def, presets: def.presets.filter((_, j) => j !== i) })}>
            Remove preset {p.name}
          </button>
        </fieldset>
      ))}
      <button type="button" onClick={() => onChange({ ...def, presets: [...def.presets, { name: `preset${def.presets.length + 1}`, values: {}, default: def.presets.length === 0 }] })}>
        Add preset
      </button>
    </form>
  );
}

/** The Run dialog: variables prefilled from the default preset. */
export function RunDialog({ def, base, onClose, onStarted }: { def: Definition; base: string; onClose: () => void; onStarted: (runId: string) => void }) {
  const preset = def.presets.find((p) => p.default);
  const [values, setValues] = useState<Record<string, string>>(() => ({ ...(preset?.values ?? {}) }));
  const [run, error, busy] = useAction();
  return (
    <div role="dialog" aria-modal="true" aria-labelledby="run-title" className="dialog">
      <h2 id="run-title">Run {def.name}</h2>
      {preset ? <p>Prefilled from the default preset “{preset.name}”.</p> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const body = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
            const started = await api<{ id: string }>('POST', `${base}/run`, { body });
            onStarted(started.id);
          });
        }}
      >
        {def.variables.map((v) => (
          <label key={v.name}>
            {v.name}
            {v.required ? ' (required)' : ''}
            {v.allowedOptions.length ? (
              <select value={values[v.name] ?? ''} onChange={(e) => setValues({ ...values, [v.name]: e.target.value })}>
                <option value="">(none)</option>
                {v.allowedOptions.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            ) : (
              <input value={values[v.name] ?? ''} onChange={(e) => setValues({ ...values, [v.name]: e.target.value })} />
            )}
          </label>
        ))}
        {def.variables.length === 0 ? <p>This flow has no variables.</p> : null}
        <div className="row">
          <button type="submit" disabled={busy} autoFocus>
            Start run
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
        <ErrorLine error={error} />
      </form>
    </div>
  );
}

/** Every save is a version: the list, and restore (which saves a new version). */
export function Versions({ base, current, onClose, onRestored }: { base: string; current?: number; onClose: () => void; onRestored: () => void }) {
  const list = useLoad(() => api<{ version: number; createdAt: string; name: string; restoredFrom?: number }[]>('GET', `${base}/versions`), [base]);
  const [run, error] = useAction();
  return (
    <div role="dialog" aria-modal="true" aria-labelledby="versions-title" className="dialog">
      <h2 id="versions-title">History</h2>
      <ErrorLine error={list.error ?? error} />
      <ul>
        {(list.data ?? []).map((v) => (
          <li key={v.version}>
            Version {v.version} · {new Date(v.createdAt).toLocaleString()} · {v.name}
            {v.restoredFrom ? ` (restored from ${v.restoredFrom})` : ''}
            {v.version === current ? (
              ' (current)'
            ) : (
              <button type="button" onClick={() => void run(async () => (await api('POST', `${base}/versions/${enc(String(v.version))}/restore`), onRestored()))}>
                Restore version {v.version}
              </button>
            )}
          </li>
        ))}
      </ul>
      <button type="button" onClick={onClose} autoFocus>
        Close
      </button>
    </div>
  );
}

/** The saved flow's masked values: whether each is set, and a form to set it (write-only). */
function MaskedValues({ base }: { base: string }) {
  const list = useLoad(() => api<{ name: string; isSet: boolean }[]>('GET', `${base}/maskedValues`), [base]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [run, error] = useAction();
  return (
    <div>
      <ErrorLine error={list.error ?? error} />
      {(list.data ?? []).map((m) => (
        <div key={m.name} className="row">
          <label>
            Value of {m.name} ({m.isSet ? 'set' : 'not set'})
            <input type="password" autoComplete="off" value={values[m.name] ?? ''} onChange={(e) => setValues({ ...values, [m.name]: e.target.value })} />
          </label>
          <button
            type="button"
            onClick={() =>
              void run(async () => {
                await api('PUT', `${base}/maskedValues/${enc(m.name)}`, { body: { value: values[m.name] ?? '' } });
                setValues({ ...values, [m.name]: '' });
                list.reload();
              })
            }
          >
            Set {m.name}
          </button>
        </div>
      ))}
    </div>
  );
}
