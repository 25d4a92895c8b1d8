import { DescribeTasksCommand, ECSClient, ECSServiceException, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';

/**
 * The few Amazon ECS actions the functions call (RunTask, DescribeTasks, StopTask) through
 * @aws-sdk/client-ecs. Credentials, region and endpoint come from the environment as for every SDK
 * client (AWS_ENDPOINT_URL_ECS or AWS_ENDPOINT_URL when set: the harness's fake ECS). The adapters
 * speak this small interface so their tests can record the calls.
 */
export interface EcsApi {
  send<T = Record<string, unknown>>(action: EcsAction, input: Record<string, unknown>): Promise<T>;
}

export type EcsAction = 'RunTask' | 'DescribeTasks' | 'StopTask';

/** An ECS error answer, with the service's error name (e.g. `AccessDeniedException`, `InvalidParameterException`). */
export class EcsError extends Error {
  constructor(
    message: string,
    readonly errorName: string,
    readonly status: number,
  ) {
    super(message);
    this.name = errorName;
  }
}

const COMMANDS = { RunTask: RunTaskCommand, DescribeTasks: DescribeTasksCommand, StopTask: StopTaskCommand } as const;

/** `endpoint` for tests that point one client at a stand-in; otherwise the environment decides. */
export function ecsApi(options: { endpoint?: string } = {}): EcsApi {
  let client: ECSClient | undefined;
  return {
    async send<T>(action: EcsAction, input: Record<string, unknown>): Promise<T> {
      client ??= new ECSClient(options.endpoint ? { endpoint: options.endpoint } : {});
      const Command = COMMANDS[action] as unknown as new (input: unknown) => RunTaskCommand;
      try {
        const output = await client.send(new Command(input), { abortSignal: AbortSignal.timeout(20_000) });
        const { $metadata: _metadata, ...rest } = output as unknown as Record<string, unknown>;
        return rest as T;
      } catch (e) {
        if (e instanceof ECSServiceException) throw new EcsError(e.message || `ECS ${action} answered ${e.$metadata.httpStatusCode}`, e.name, e.$metadata.httpStatusCode ?? 500);
        throw e;
      }
    },
  };
}
