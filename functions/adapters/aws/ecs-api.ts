import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { SFNClient } from '@aws-sdk/client-sfn';

/**
 * The few Amazon ECS actions the functions call (RunTask, DescribeTasks, StopTask), as signed
 * JSON 1.1 requests (`X-Amz-Target: AmazonEC2ContainerServiceV20141113.<Action>`). The platform
 * does not depend on @aws-sdk/client-ecs (issue 19 names no new SDK client): credentials and
 * region come from an SDK client the bundle already has (the default provider chain, as every
 * client's), the endpoint from AWS_ENDPOINT_URL_ECS or AWS_ENDPOINT_URL when set (as the SDK
 * clients read them), else the regional endpoint. Swapping in @aws-sdk/client-ecs changes only
 * this file.
 */
export interface EcsApi {
  send<T = Record<string, unknown>>(action: 'RunTask' | 'DescribeTasks' | 'StopTask', input: Record<string, unknown>): Promise<T>;
}

/** node:crypto behind the SHA-256 interface the signer expects (an HMAC when given a secret). */
type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: Data): string | Uint8Array =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

class NodeSha256 {
  private readonly hash;
  constructor(secret?: Data) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Data): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

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

export function ecsApi(env: NodeJS.ProcessEnv = process.env): EcsApi {
  const base = new SFNClient({});
  return {
    async send<T>(action: string, input: Record<string, unknown>): Promise<T> {
      const region = await base.config.region();
      const endpoint = new URL(env.AWS_ENDPOINT_URL_ECS || env.AWS_ENDPOINT_URL || `https://ecs.${region}.amazonaws.com`);
      const signer = new SignatureV4({ credentials: base.config.credentials, region, service: 'ecs', sha256: NodeSha256 });
      const body = JSON.stringify(input);
      const signed = await signer.sign({
        method: 'POST',
        protocol: endpoint.protocol,
        hostname: endpoint.hostname,
        port: endpoint.port ? Number(endpoint.port) : undefined,
        path: '/',
        query: {},
        headers: {
          host: endpoint.host,
          'content-type': 'application/x-amz-json-1.1',
          'x-amz-target': `AmazonEC2ContainerServiceV20141113.${action}`,
        },
        body,
      });
      // fetch sets Host itself (the same value as signed).
      const { host: _host, ...headers } = signed.headers;
      const res = await fetch(new URL('/', endpoint), { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (!res.ok) {
        const type = String(parsed.__type ?? res.headers.get('x-amzn-errortype') ?? 'EcsError').split('#').pop()!.split(':')[0]!;
        throw new EcsError(String(parsed.message ?? parsed.Message ?? `ECS ${action} answered ${res.status}`), type, res.status);
      }
      return parsed as T;
    },
  };
}
