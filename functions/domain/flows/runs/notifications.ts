/**
 * Failure email: when a run ends `failed` or `timeout`, its starter is told which flow, which
 * run, which task and what went wrong. Aborted runs send none, and a user can switch these
 * emails off (the "Email notifications" setting).
 */
import type { FlowDefinition } from '../blueprints/model.js';
import type { FlowRecord, RunRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';

const NOTIFIED_STATUSES = new Set(['failed', 'timeout']);

export class FlowNotifier {
  constructor(private readonly platform: Platform) {}

  async runSettled(run: RunRecord, flow: FlowRecord, definition: FlowDefinition): Promise<void> {
    if (!NOTIFIED_STATUSES.has(run.status)) return;
    const starter = await this.platform.store.getAccount(run.startedByUid);
    if (!starter || starter.type !== 'user' || starter.emailNotifications === false || !starter.email) return;
    const owner = await this.platform.store.getAccount(flow.ownerUid);
    const task = run.error?.taskId ? definition.tasks.find((t) => t.id === run.error!.taskId) : undefined;
    const apiUrl = run.apiUrl || this.platform.settings.publicApiUrl || '';
    const what = run.status === 'timeout' ? 'timed out' : 'failed';
    const lines = [
      `Hello ${starter.name ?? starter.accountName},`,
      '',
      `A run of the flow "${definition.name}" (${owner?.accountName ?? '?'}/${flow.flowId}) that you started ${what}.`,
      '',
      `Run: ${run.id}${apiUrl ? ` (${apiUrl}/flows/runs/${run.id})` : ''}`,
      `Started: ${run.createdAt} (${run.startedFrom.type})`,
      `Ended: ${run.finishedAt ?? ''}`,
      task ? `Task: ${task.label} (${task.id}, ${task.type})` : run.error?.taskId ? `Task: ${run.error.taskId}` : 'Task: none (the run could not continue)',
      `Error: ${run.error?.message ?? (run.status === 'timeout' ? 'The task ran longer than its Timeout.' : 'unknown')}`,
      '',
      'You get this email because your account has Email notifications switched on; switch them off in your user settings (PATCH /accounts/{you} {"emailNotifications": false}).',
    ];
    await this.platform.mailer.send({
      to: [starter.email],
      subject: `Flow run ${what}: ${definition.name}`,
      text: lines.join('\n'),
    });
  }
}
