/**
 * The Flows limits of the spec ("Limits" table), in one place. Lengths count Unicode characters
 * (code points), not UTF-16 units, so "é" or an emoji counts once.
 */
export const FLOW_LIMITS = {
  flowName: 80,
  taskLabel: 40,
  presetName: 80,
  scheduleLabel: 80,
  hookLabelMin: 2,
  hookLabelMax: 80,
  inlineSparql: 10_000,
  sendEmailTasks: 5,
  emailRecipients: 10,
  emailBody: 10_000,
  runDescription: 1_000,
  runsListing: 10_000,
  /**
   * Not in the spec: the most tasks and connections one flow may have. Each task is a state of
   * the compiled state machine, compiled when a run starts, and the flow is validated on every
   * save; both stay quick within these limits (a 3,000-task flow took seconds).
   */
  tasks: 200,
  connections: 1_000,
  /**
   * Not in the spec: the largest definition (as JSON, in bytes). A version is one stored item
   * (DynamoDB: 400 KB with the record's other fields) and compiles to one state machine.
   */
  definitionBytes: 300_000,
  /** Not in the spec: the longest regular expression of a Decision `matches` condition. */
  decisionPattern: 1_000,
  /**
   * Not in the spec: the longest Timeout a task may have. A standard Step Functions execution
   * lasts at most a year, so a longer Timeout could never fire.
   */
  taskTimeoutSeconds: 31_536_000,
} as const;

/** Length in characters (code points). */
export function charLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
