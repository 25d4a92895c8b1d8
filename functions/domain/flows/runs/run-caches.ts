/**
 * What one process keeps about runs between calls, shared by starting, the task worker, settling
 * and listing: stored flow versions (never changed once saved) and each run's platform token
 * (fixed while the run lasts). Both are read-through and bounded.
 */
import type { FlowVersionRecord, RunRecord } from '../records.js';
import type { Platform } from '../../shared/platform.js';

const MAX_VERSIONS = 200;
const MAX_SECRETS = 1_000;

export class RunCaches {
  private readonly versions = new Map<string, FlowVersionRecord>();
  private readonly secrets = new Map<string, Promise<string | null>>();

  constructor(private readonly platform: Platform) {}

  /** The flow version a run runs (null when it is gone). */
  async versionOf(run: Pick<RunRecord, 'blueprintUid' | 'version'>): Promise<FlowVersionRecord | null> {
    const key = `${run.blueprintUid}#${run.version}`;
    const cached = this.versions.get(key);
    if (cached) return cached;
    const version = await this.platform.flows.getFlowVersion(run.blueprintUid, run.version);
    if (version) {
      if (this.versions.size >= MAX_VERSIONS) this.versions.clear();
      this.versions.set(key, version);
    }
    return version;
  }

  /** A version's executable was prepared after the version was cached: the cached copy learns it. */
  rememberExecutable(blueprintUid: string, version: number, executable: string): void {
    const cached = this.versions.get(`${blueprintUid}#${version}`);
    if (cached) cached.executable = executable;
  }

  /** A run's platform token, read once per run by this process. */
  runSecret(runId: string): Promise<string | null> {
    let secret = this.secrets.get(runId);
    if (!secret) {
      secret = this.platform.flows.getRunSecret(runId);
      if (this.secrets.size >= MAX_SECRETS) this.secrets.clear();
      this.secrets.set(runId, secret);
      secret.catch(() => this.secrets.delete(runId));
    }
    return secret;
  }

  /** The run ended: its token is no longer valid. */
  forgetSecret(runId: string): void {
    this.secrets.delete(runId);
  }
}
