/**
 * What a task instance keeps of its log, error and output. The instance is stored as one item
 * (DynamoDB: at most 400 KB with every other field), so each part has a budget and a task that
 * logs a lot keeps its first lines and a last one saying what was cut, rather than losing its
 * whole record to a refused write.
 *
 * Budgets (UTF-8 bytes unless said): log lines 200 and 64 KiB in all, each line at most 2,000
 * characters; the error 4,000 characters; the stored output 64 KiB as JSON. With artifacts (a
 * few hundred bytes each) and the other fields that stays far below 400 KB.
 */
export const TASK_LOG_LIMITS = {
  lines: 200,
  lineChars: 2_000,
  logBytes: 64 * 1024,
  errorChars: 4_000,
  outputBytes: 64 * 1024,
} as const;

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The text cut to `max` characters (code points), marked when cut. */
export function cutText(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')}… [cut: ${chars.length - max} more characters]`;
}

export class TaskLog {
  private readonly kept: string[] = [];
  private bytes = 0;
  private dropped = 0;

  /** Adds a line unless the log is full (then it is counted in the closing note). */
  add(line: string): void {
    const text = cutText(line, TASK_LOG_LIMITS.lineChars);
    const size = bytesOf(text);
    // One line is kept free for the note (and the error line the worker adds last).
    if (this.dropped > 0 || this.kept.length >= TASK_LOG_LIMITS.lines - 2 || this.bytes + size > TASK_LOG_LIMITS.logBytes) {
      this.dropped++;
      return;
    }
    this.kept.push(text);
    this.bytes += size;
  }

  /** The stored lines: what was kept, a note when lines were left out, then `last` (the error). */
  lines(last?: string): string[] {
    const out = [...this.kept];
    if (this.dropped > 0) {
      out.push(`[log cut: ${this.dropped} more line${this.dropped === 1 ? '' : 's'} not kept; a task keeps at most ${TASK_LOG_LIMITS.lines} lines and ${TASK_LOG_LIMITS.logBytes / 1024} KiB of log]`);
    }
    if (last !== undefined) out.push(cutText(last, TASK_LOG_LIMITS.errorChars));
    return out;
  }
}

/** The output as stored with the instance: itself, or a note when it is too large to keep. */
export function storedOutput(output: unknown): unknown {
  const size = bytesOf(JSON.stringify(output) ?? '');
  if (size <= TASK_LOG_LIMITS.outputBytes) return output;
  return { note: `The output (${size} bytes) is too large to keep with the task; at most ${TASK_LOG_LIMITS.outputBytes} bytes are kept.` };
}
