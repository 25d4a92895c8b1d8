import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useState, type DragEvent } from 'react';
import { api, ApiError, call, enc, type Problem } from '../api';
import { href } from '../router';
import { ErrorLine, useAction, useLoad } from '../ui';
import { typeInfo } from './catalogue';
import { FlowPanel, RunDialog, TaskForm, Versions } from './panels';
import { RunPanel, type TaskInstance } from './RunPanel';
import type { Definition, Task } from './types';

interface ServedTaskType {
  type: string;
  title: string;
  kind: 'control' | 'data';
  mayRunLong: boolean;
  enabled: boolean;
}

type TaskNodeData = { task: Task; problems: string[]; status?: string };
type TaskNode = Node<TaskNodeData, 'task'>;

function TaskNodeView({ data, selected }: NodeProps<TaskNode>) {
  const info = typeInfo(data.task.type);
  return (
    <div className={`task-node${selected ? ' selected' : ''}${data.problems.length ? ' has-problems' : ''}${data.status ? ` status-${data.status}` : ''}`} data-testid={`node-${data.task.id}`}>
      <Handle type="target" position={Position.Left} />
      <strong>{data.task.label}</strong>
      <div className="hint">
        {info?.title ?? data.task.type} · {data.task.id}
      </div>
      {data.status ? <div className="node-status">{data.status}</div> : null}
      {data.problems.map((p, i) => (
        <div key={i} className="error node-problem">
          {p}
        </div>
      ))}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}
const NODE_TYPES = { task: TaskNodeView };

/** `tasks[2].settings.x` → the id of task 2 (as sent), and what is left of the path. */
function problemsByTask(problems: Problem[], sent: Definition): { byTask: Map<string, Problem[]>; flow: Problem[] } {
  const byTask = new Map<string, Problem[]>();
  const flow: Problem[] = [];
  for (const p of problems) {
    const m = /^tasks\[(\d+)\]/.exec(p.path);
    const id = m ? sent.tasks[Number(m[1])]?.id : undefined;
    if (id) byTask.set(id, [...(byTask.get(id) ?? []), p]);
    else flow.push(p);
  }
  return { byTask, flow };
}

function newTaskId(def: Definition, type: string): string {
  for (let n = 1; n < 10_000; n++) if (!def.tasks.some((t) => t.id === `${type}${n}`)) return `${type}${n}`;
  return `${type}${Date.now()}`;
}

function Editor({ account, flow }: { account: string; flow: string }) {
  const base = `/flows/blueprints/${enc(account)}/${enc(flow)}`;
  const layoutKey = `ldp-flow-layout:${account}/${flow}`;
  const [def, setDef] = useState<Definition>();
  const [past, setPast] = useState<Definition[]>([]);
  const [saved, setSaved] = useState<{ version: number; def: Definition }>();
  const [positions, setPositions] = useState<Record<string, { x: number; y: number }>>({});
  const [selected, setSelected] = useState<string>();
  const [problems, setProblems] = useState<{ byTask: Map<string, Problem[]>; flow: Problem[] }>({ byTask: new Map(), flow: [] });
  const [loadError, setLoadError] = useState<unknown>();
  const [dialog, setDialog] = useState<'run' | 'versions' | 'turtle'>();
  const [turtle, setTurtle] = useState('');
  const [runId, setRunId] = useState<string>();
  const [taskStatus, setTaskStatus] = useState<Record<string, string>>({});
  const [save, saveError, saving] = useAction();
  const [copy, copyError] = useAction();
  const flowApi = useReactFlow();
  // The palette is the API's task catalogue; the forms come from ./catalogue (JSON for a type it does not know).
  const catalogue = useLoad(() => api<ServedTaskType[]>('GET', '/flows/taskTypes'), []);

  const load = useCallback(async () => {
    try {
      const found = await api<{ version: number; definition: Definition }>('GET', base);
      setDef(found.definition);
      setSaved({ version: found.version, def: found.definition });
      setPast([]);
      // Where each task was put on the canvas is this browser's (the definition holds no layout).
      const stored = JSON.parse(localStorage.getItem(layoutKey) ?? '{}') as Record<string, { x: number; y: number }>;
      setPositions((p) => layout(found.definition, { ...stored, ...p }));
    } catch (e) {
      setLoadError(e);
    }
  }, [base, layoutKey]);
  useEffect(() => void load(), [load]);
  useEffect(() => {
    if (Object.keys(positions).length) localStorage.setItem(layoutKey, JSON.stringify(positions));
  }, [positions, layoutKey]);

  /** Every change goes through here, so Undo can take it back. */
  const change = useCallback(
    (next: Definition) => {
      if (!def) return;
      setPast((p) => [...p.slice(-99), def]);
      setDef(next);
    },
    [def],
  );
  const undo = useCallback(() => {
    setPast((p) => {
      const last = p[p.length - 1];
      if (last) setDef(last);
      return p.slice(0, -1);
    });
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if ((e.ctrlKey || e.metaKey) && e.key === 'z' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) {
        e.preventDefault();
        undo();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [undo]);

  const addTask = (type: string, position?: { x: number; y: number }) => {
    if (!def) return;
    const info = typeInfo(type);
    const served = catalogue.data?.find((t) => t.type === type);
    const id = newTaskId(def, type);
    change({ ...def, tasks: [...def.tasks, { id, label: served?.title ?? info?.title ?? type, type, settings: structuredClone(info?.initial ?? {}) }] });
    setPositions((p) => ({ ...p, [id]: position ?? { x: 40 + (def.tasks.length % 4) * 240, y: 40 + Math.floor(def.tasks.length / 4) * 140 } }));
    setSelected(id);
  };

  const nodes: TaskNode[] = useMemo(
    () =>
      (def?.tasks ?? []).map((task) => ({
        id: task.id,
        type: 'task',
        position: positions[task.id] ?? { x: 0, y: 0 },
        selected: task.id === selected,
        ariaLabel: `Task ${task.label} (${task.id})`,
        data: { task, problems: (problems.byTask.get(task.id) ?? []).map((p) => p.message), status: taskStatus[task.id] },
      })),
    [def, positions, selected, problems, taskStatus],
  );
  const edges: Edge[] = useMemo(
    () => (def?.connections ?? []).map((c) => ({ id: `${c.from}->${c.to}`, source: c.from, target: c.to, ariaLabel: `Connection ${c.from} to ${c.to}` })),
    [def],
  );

  const onNodesChange = (changes: NodeChange<TaskNode>[]) => {
    if (!def) return;
    const removed = new Set<string>();
    for (const c of changes) {
      if (c.type === 'position' && c.position) setPositions((p) => ({ ...p, [c.id]: c.position! }));
      if (c.type === 'select') setSelected(c.selected ? c.id : (s) => (s === c.id ? undefined : s));
      if (c.type === 'remove') removed.add(c.id);
    }
    if (removed.size) {
      change({ ...def, tasks: def.tasks.filter((t) => !removed.has(t.id)), connections: def.connections.filter((c) => !removed.has(c.from) && !removed.has(c.to)) });
    }
  };
  const onEdgesChange = (changes: EdgeChange[]) => {
    if (!def) return;
    const removed = new Set(changes.filter((c) => c.type === 'remove').map((c) => c.id));
    if (removed.size) change({ ...def, connections: def.connections.filter((c) => !removed.has(`${c.from}->${c.to}`)) });
  };
  const onConnect = (c: Connection) => {
    if (!def || !c.source || !c.target || c.source === c.target) return;
    if (def.connections.some((x) => x.from === c.source && x.to === c.target)) return;
    change({ ...def, connections: [...def.connections, { from: c.source, to: c.target }] });
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    const type = e.dataTransfer.getData('application/x-ldp-task-type');
    if (type) addTask(type, flowApi.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  };

  const doSave = () =>
    save(async () => {
      if (!def) return;
      try {
        const res = await api<{ version: number; definition: Definition }>('PUT', base, { body: def });
        setSaved({ version: res.version, def: res.definition });
        setProblems({ byTask: new Map(), flow: [] });
      } catch (e) {
        if (e instanceof ApiError && e.problems.length) setProblems(problemsByTask(e.problems, def));
        throw e;
      }
    });

  if (loadError) return <ErrorLine error={loadError} />;
  if (!def) return <p aria-busy="true">Loading the flow…</p>;
  const dirty = saved && JSON.stringify(saved.def) !== JSON.stringify(def);
  const task = def.tasks.find((t) => t.id === selected);
  return (
    <div className="flow-editor">
      <h1>
        <a href={href('flows', account)}>Flows of {account}</a> / {def.name}
      </h1>
      <div className="row toolbar" role="toolbar" aria-label="Flow">
        <button type="button" onClick={() => void doSave()} disabled={saving}>
          Save
        </button>
        <button type="button" onClick={undo} disabled={past.length === 0}>
          Undo
        </button>
        <button type="button" onClick={() => setDialog('run')} disabled={!!dirty}>
          Run…
        </button>
        <button type="button" onClick={() => setDialog('versions')}>
          History
        </button>
        <button
          type="button"
          onClick={() =>
            void copy(async () => {
              const text = await (await call('GET', `${base}/download.ttl`, { headers: { accept: 'text/turtle' } })).text();
              setTurtle(text);
              setDialog('turtle');
              await navigator.clipboard?.writeText(text).catch(() => {});
            })
          }
        >
          Copy as Turtle
        </button>
        <a href={href('runs', account, flow)}>Runs</a>
        <span className="hint" role="status" data-testid="save-state">
          {dirty ? 'Unsaved changes' : `Saved as version ${saved?.version}`}
        </span>
      </div>
      <ErrorLine error={saveError} />
      <ErrorLine error={copyError} />
      {problems.flow.length ? (
        <ul className="error" aria-label="Problems of the flow">
          {problems.flow.map((p, i) => (
            <li key={i}>
              {p.path ? <code>{p.path}</code> : null} {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="editor-grid">
        <aside aria-label="Task types" className="palette">
          <h2>Task types</h2>
          <p className="hint">Drag onto the canvas, or press to add.</p>
          <ErrorLine error={catalogue.error} />
          {(catalogue.data ?? []).map((t) => (
            <button
              key={t.type}
              type="button"
              className={`palette-${t.kind}`}
              disabled={!t.enabled}
              title={t.enabled ? `${t.kind} task${t.mayRunLong ? '; may run long' : ''}` : 'Switched off by the administrator'}
              draggable={t.enabled}
              onDragStart={(e) => {
                e.dataTransfer.setData('application/x-ldp-task-type', t.type);
                e.dataTransfer.effectAllowed = 'move';
              }}
              onClick={() => addTask(t.type)}
              aria-label={`Add task ${t.title}`}
            >
              {t.title}
            </button>
          ))}
        </aside>
        <div className="canvas" onDrop={onDrop} onDragOver={(e) => e.preventDefault()} data-testid="canvas">
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onPaneClick={() => setSelected(undefined)}
            fitView
            deleteKeyCode={['Delete', 'Backspace']}
            ariaLabelConfig={{ 'node.a11yDescription.default': 'Press Enter or Space to select, Delete to remove, arrow keys to move.' }}
          >
            <Background />
            <Controls />
          </ReactFlow>
        </div>
        <aside aria-label="Settings" className="side">
          {task ? (
            <TaskForm
              key={task.id}
              task={task}
              def={def}
              problems={problems.byTask.get(task.id) ?? []}
              onChange={(next) => change({ ...def, tasks: def.tasks.map((t) => (t.id === task.id ? next : t)) })}
              onConnections={(connections) => change({ ...def, connections })}
              onRemove={() => (change({ ...def, tasks: def.tasks.filter((t) => t.id !== task.id), connections: def.connections.filter((c) => c.from !== task.id && c.to !== task.id) }), setSelected(undefined))}
            />
          ) : (
            <FlowPanel def={def} base={base} onChange={change} />
          )}
        </aside>
      </div>
      {dialog === 'run' ? (
        <RunDialog
          def={def}
          base={base}
          onClose={() => setDialog(undefined)}
          onStarted={(id) => (setDialog(undefined), setTaskStatus({}), setRunId(id))}
        />
      ) : null}
      {dialog === 'versions' ? <Versions base={base} current={saved?.version} onClose={() => setDialog(undefined)} onRestored={() => (setDialog(undefined), void load())} /> : null}
      {dialog === 'turtle' ? (
        <div role="dialog" aria-modal="true" aria-labelledby="turtle-title" className="dialog">
          <h2 id="turtle-title">The flow as Turtle</h2>
          <p>Copied to the clipboard where the browser allows it. Paste it on another account's Flows page to make a new flow.</p>
          <label>
            Turtle
            <textarea readOnly rows={14} value={turtle} className="editor" data-testid="turtle" />
          </label>
          <button type="button" onClick={() => setDialog(undefined)} autoFocus>
            Close
          </button>
        </div>
      ) : null}
      {runId ? (
        <RunPanel
          runId={runId}
          onTasks={(tasks: TaskInstance[]) => setTaskStatus(Object.fromEntries(tasks.map((t) => [t.taskId, t.status])))}
        />
      ) : null}
    </div>
  );
}

/** Positions for tasks that have none: columns by distance from the start. */
function layout(def: Definition, known: Record<string, { x: number; y: number }>): Record<string, { x: number; y: number }> {
  const depth = new Map<string, number>();
  const incoming = new Map(def.tasks.map((t) => [t.id, def.connections.filter((c) => c.to === t.id).length]));
  let frontier = def.tasks.filter((t) => incoming.get(t.id) === 0).map((t) => t.id);
  for (let d = 0; frontier.length && d < def.tasks.length + 1; d++) {
    for (const id of frontier) depth.set(id, d);
    frontier = def.connections.filter((c) => frontier.includes(c.from) && !depth.has(c.to)).map((c) => c.to);
  }
  const rows = new Map<number, number>();
  const out = { ...known };
  for (const t of def.tasks) {
    if (out[t.id]) continue;
    const d = depth.get(t.id) ?? 0;
    const row = rows.get(d) ?? 0;
    rows.set(d, row + 1);
    out[t.id] = { x: 40 + d * 260, y: 40 + row * 140 };
  }
  return out;
}

export default function FlowEditor(props: { account: string; flow: string }) {
  return (
    <ReactFlowProvider>
      <Editor {...props} />
    </ReactFlowProvider>
  );
}
