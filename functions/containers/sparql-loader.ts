/**
 * Container role `sparql-loader` (see main.ts). A stub until its owner builds it (issue 19).
 */
export async function run(_args: string[]): Promise<void> {
  throw new Error('container role sparql-loader: not built yet');
}
