/**
 * A bar chart of a results table when it helps: one column of labels and one of numbers (the first
 * of each), at most 50 rows. Plain SVG, no chart library.
 */
export function chartColumns(vars: string[], rows: Record<string, { value: string }>[]): { label: string; value: string } | undefined {
  if (rows.length === 0 || rows.length > 50) return undefined;
  const numeric = (v: string) => rows.every((r) => r[v] !== undefined && r[v]!.value.trim() !== '' && Number.isFinite(Number(r[v]!.value)));
  const value = vars.find(numeric);
  const label = vars.find((v) => v !== value);
  return value && label ? { label, value } : undefined;
}

export function BarChart({ rows, label, value }: { rows: Record<string, { value: string }>[]; label: string; value: string }) {
  const numbers = rows.map((r) => Number(r[value]?.value ?? 0));
  const max = Math.max(...numbers.map(Math.abs), 1);
  const barHeight = 22;
  const labelWidth = 220;
  const width = 640;
  return (
    <figure>
      <svg role="img" aria-label={`Bar chart of ${value} by ${label}`} width={width} height={rows.length * barHeight + 10} className="chart">
        {rows.map((r, i) => {
          const n = numbers[i]!;
          const w = Math.max(1, (Math.abs(n) / max) * (width - labelWidth - 70));
          const text = r[label]?.value ?? '';
          return (
            <g key={i} transform={`translate(0, ${i * barHeight + 5})`}>
              <text x={labelWidth - 6} y={15} textAnchor="end" fontSize="12">
                {text.length > 32 ? `${text.slice(0, 31)}…` : text}
              </text>
              <rect x={labelWidth} y={3} width={w} height={barHeight - 6} fill="#3d6fb6" />
              <text x={labelWidth + w + 4} y={15} fontSize="12">
                {n}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="hint">
        {value} by {label}
      </figcaption>
    </figure>
  );
}
