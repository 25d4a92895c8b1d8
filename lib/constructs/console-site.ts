/**
 * The console on AWS (issue 17): its Vite build in a private S3 bucket behind CloudFront, on the
 * same site as the API so the console's session cookie (SameSite=Strict, HttpOnly) is the API's:
 * the distribution's default behaviour forwards every request to the HTTP API uncached (cookies,
 * query strings and headers but Host, which API Gateway needs to be its own), and `/console*` is
 * served from the bucket through Origin Access Control, cached, with the console's CSP. Deploy
 * with `-c publicApiUrl=https://<the distribution's domain>` so tokens, links and /info.consoleUrl
 * name the one site (README, "Deploy to AWS"). The console stack is its own (bin/platform.ts), so the
 * stateless stack's resources and functions stay as they are.
 */
import { existsSync } from 'node:fs';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type IBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { CONSOLE_CSP, CONSOLE_PATH } from '../../functions/http/console-static.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';

export interface ConsoleSiteProps {
  /** The public HTTP API the default behaviour forwards to. */
  api: IHttpApi;
  /** The console's build (bin/console-build.ts writes console/dist). Missing: a page saying how to build it. */
  buildDir: string;
  /** Where the site bucket's server access logs go (the stateful stack's access log bucket). */
  accessLogsBucket?: IBucket;
}

/** `/console` and `/console/` are the console's index.html (its routes live in the URL's hash). */
const INDEX_REWRITE = `function handler(event) {
  var uri = event.request.uri;
  if (uri === '${CONSOLE_PATH}' || uri === '${CONSOLE_PATH}/') event.request.uri = '${CONSOLE_PATH}/index.html';
  return event.request;
}`;

export class ConsoleSite extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  readonly deployment: BucketDeployment;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Only the build, rebuilt by every deploy: nothing to keep.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
      ...(props.accessLogsBucket ? { serverAccessLogsBucket: props.accessLogsBucket, serverAccessLogsPrefix: 'console-site/' } : {}),
    });
    if (!props.accessLogsBucket) {
      acknowledge(this.bucket, 'S1', 'Given no access log bucket (a stand-alone synth): the bucket holds only the public console build, read by CloudFront alone.');
    }

    const apiDomain = `${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const headers = new ResponseHeadersPolicy(this, 'ConsoleHeaders', {
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONSOLE_CSP, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.SAME_ORIGIN, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Linked-data platform: the API and its console on one site',
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: new HttpOrigin(apiDomain, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY, readTimeout: Duration.seconds(60) }),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        // Answers depend on who asks (the API sends no-store): never cached, everything forwarded but Host.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      additionalBehaviors: {
        [`${CONSOLE_PATH}*`]: {
          origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: CachePolicy.CACHING_OPTIMIZED,
          compress: true,
          responseHeadersPolicy: headers,
          functionAssociations: [
            {
              eventType: FunctionEventType.VIEWER_REQUEST,
              function: new CloudFrontFunction(this, 'IndexRewrite', { code: FunctionCode.fromInline(INDEX_REWRITE), comment: 'The console index at /console/' }),
            },
          ],
        },
      },
    });
    acknowledge(this.distribution, 'CFR1', 'The platform serves open data to anyone; no country is excluded by design.');
    acknowledge(
      this.distribution,
      'CFR2',
      'No WAF web ACL by default: the API throttles at its stage and every route checks input, tokens and roles; an operator can attach a web ACL to the distribution.',
    );
    acknowledge(this.distribution, 'CFR3', 'Request logs are the API stage\'s access logs (every API request reaches it); the console\'s static files hold no user data.');
    acknowledge(
      this.distribution,
      'CFR4',
      'The viewer certificate is CloudFront\'s default (*.cloudfront.net), whose TLS policy CloudFront fixes; an operator adding a custom domain sets its certificate and TLSv1.2_2021.',
    );

    const built = existsSync(props.buildDir);
    const source = built
      ? Source.asset(props.buildDir)
      : Source.data('index.html', '<!doctype html><title>Console not built</title><p>Run <code>npx tsx bin/console-build.ts</code>, then deploy again.</p>');
    const destination = { destinationBucket: this.bucket, destinationKeyPrefix: `${CONSOLE_PATH.slice(1)}/`, memoryLimit: 256 };
    // Hashed assets never change: cached for a year. index.html names them: revalidated, and invalidated at CloudFront.
    this.deployment = new BucketDeployment(this, 'Assets', {
      ...destination,
      sources: [source],
      exclude: ['index.html'],
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
    });
    const index = new BucketDeployment(this, 'Index', {
      ...destination,
      sources: [source],
      exclude: ['*'],
      include: ['index.html'],
      prune: false,
      cacheControl: [CacheControl.noCache()],
      distribution: this.distribution,
      distributionPaths: [`${CONSOLE_PATH}/index.html`, `${CONSOLE_PATH}/`, CONSOLE_PATH],
    });
    index.node.addDependency(this.deployment);
    // CDK's BucketDeployment is a singleton Lambda function at the stack's root: its findings are acknowledged there.
    acknowledge(
      stack,
      'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'The BucketDeployment custom resource\'s function (CDK\'s own) uses AWSLambdaBasicExecutionRole: CloudWatch Logs only.',
    );
    const copies =
      'CDK\'s BucketDeployment custom resource copies the build from the CDK asset bucket into the console bucket and prunes old files: ' +
      'CDK grants it these actions on those two buckets only.';
    for (const finding of ['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*', 'Action::s3:DeleteObject*', 'Action::s3:Abort*']) {
      acknowledge(stack, `IAM5[${finding}]`, copies);
    }
    // The default synthesizer's asset bucket, as the finding names it (a concrete region when the CLI gives one).
    acknowledgeWildcardResource(stack, `arn:${stack.partition}:s3:::cdk-hnb659fds-assets-${stack.account}-${stack.region}/*`, `${copies} (this is the asset bucket's objects).`);
    acknowledgeWildcardResource(stack, `${this.bucket.bucketArn}/*`, `${copies} (this is the console bucket's objects).`);
    acknowledge(stack, 'IAM5[Resource::*]', 'CDK\'s BucketDeployment custom resource creates the CloudFront invalidation of index.html; CloudFront invalidations take no resource narrower than *.');
    acknowledge(stack, 'L1', 'The BucketDeployment custom resource\'s runtime is chosen by aws-cdk-lib and updated with it.');
  }

  /** The site's URL: deploy the stacks with `-c publicApiUrl=` this. */
  get url(): string {
    return `https://${this.distribution.distributionDomainName}`;
  }
}
