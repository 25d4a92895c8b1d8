import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { executionResultOf } from '../adapters/aws/step-functions-executor.js';
import { awsLambda, awsLogger, awsServices } from '../composition/aws.js';

/** The detail of a "Step Functions Execution Status Change" event (the fields used here). */
export interface ExecutionStatusChange {
  executionArn: string;
  stateMachineArn?: string;
  /** The execution's name: the run's id. */
  name: string;
  status: string;
  output?: string | null;
  /** `included: false` when the output was too large for the event. */
  outputDetails?: { included?: boolean } | null;
  error?: string | null;
  cause?: string | null;
}

export type ExecutionStatusChangeEvent = EventBridgeEvent<'Step Functions Execution Status Change', ExecutionStatusChange>;

/**
 * Lambda entry invoked (asynchronously, by an EventBridge rule) when an execution of one of the
 * flows' state machines ends: settles the run named by the execution. Still-running statuses are
 * ignored (the rule does not send them). Settling is idempotent: a final run is not written again,
 * so EventBridge's and Lambda's retries are harmless.
 */
const base = async (event: ExecutionStatusChangeEvent): Promise<void> => {
  const detail = event?.detail;
  if (!detail || typeof detail.name !== 'string' || typeof detail.executionArn !== 'string') {
    awsLogger.warn('flow-settle: ignoring a malformed event');
    return;
  }
  const services = await awsServices();
  let result = executionResultOf(detail);
  if (!result) return;
  // Events carry at most 256 KB of output; a larger one is read from the execution itself.
  if (result.kind === 'succeeded' && detail.output == null && detail.outputDetails?.included === false) {
    result = (await services.platform.flowExecutor.result(detail.executionArn)) ?? result;
  }
  await services.flowRuntime.settle(detail.name, result);
};

export const handler = middy<ExecutionStatusChangeEvent, void>(base).use(awsLambda.middlewares);
