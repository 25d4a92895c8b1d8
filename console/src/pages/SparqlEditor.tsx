import { StreamLanguage } from '@codemirror/language';
import { sparql } from '@codemirror/legacy-modes/mode/sparql';
import { EditorView, keymap } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

/**
 * The SPARQL editor: CodeMirror 6 with SPARQL highlighting, line numbers, bracket matching, undo
 * and search (loaded with the query page, on demand). Ctrl/Cmd+Enter runs the query. Labelled
 * for assistive technology by `label`.
 */
export function SparqlEditor({ value, onChange, onRun, label }: { value: string; onChange: (text: string) => void; onRun: () => void; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const handlers = useRef({ onChange, onRun });
  handlers.current = { onChange, onRun };
  useEffect(() => {
    view.current = new EditorView({
      parent: host.current!,
      doc: value,
      extensions: [
        keymap.of([{ key: 'Mod-Enter', run: () => (handlers.current.onRun(), true) }]),
        basicSetup,
        StreamLanguage.define(sparql),
        EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true' }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) handlers.current.onChange(u.state.doc.toString());
        }),
      ],
    });
    return () => view.current?.destroy();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  // Outside changes (a new query loaded) replace the text.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);
  return <div ref={host} className="sparql-editor" data-testid="sparql-editor" />;
}
