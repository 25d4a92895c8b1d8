/** EventBridge event patterns, as far as the template's rules use them (and a little more). */
export function matchesPattern(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    const actual = event[key];
    if (Array.isArray(expected)) {
      const values = Array.isArray(actual) ? actual : [actual];
      return expected.some((m) => values.some((v) => matchesValue(m, v)));
    }
    if (expected && typeof expected === 'object') return !!actual && typeof actual === 'object' && matchesPattern(expected as Record<string, unknown>, actual as Record<string, unknown>);
    return false;
  });
}

function matchesValue(matcher: unknown, value: unknown): boolean {
  if (matcher === null || typeof matcher !== 'object') return matcher === value;
  const m = matcher as Record<string, any>;
  if ('prefix' in m) return typeof value === 'string' && value.startsWith(m.prefix);
  if ('suffix' in m) return typeof value === 'string' && value.endsWith(m.suffix);
  if ('exists' in m) return (value !== undefined) === m.exists;
  if ('anything-but' in m) return !(Array.isArray(m['anything-but']) ? m['anything-but'] : [m['anything-but']]).includes(value);
  if ('wildcard' in m) {
    if (typeof value !== 'string') return false;
    const re = new RegExp(`^${String(m.wildcard).split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    return re.test(value);
  }
  throw new Error(`harness: event pattern matcher ${JSON.stringify(m)} not modelled`);
}
