/**
 * The issue-18 table: each bench part records the figure it measured next to the aim the issue
 * names, and `npm run bench` prints them together at the end of the run (one table, one run).
 */
export interface AimRow {
  measure: string;
  now: string;
  aim: string;
  met: boolean | undefined;
}

const rows: AimRow[] = [];

/** Records one measured figure; `met` is undefined when the part could not judge it (say why in `now`). */
export function recordAim(measure: string, now: string, aim: string, met: boolean | undefined): void {
  rows.push({ measure, now, aim, met });
}

export function formatAims(): string[] {
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((r) => r.measure.length));
  return [
    '# Figures against their aims (issue 18)',
    ...rows.map((r) => `${r.measure.padEnd(width)}  ${r.now}  (aim ${r.aim})  ${r.met === undefined ? '?' : r.met ? 'met' : 'NOT met'}`),
  ];
}
