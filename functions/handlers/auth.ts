import { awsServices } from '../composition/aws.js';
import { lambdaHandler } from '../http/lambda.js';

/** Lambda entry of the "auth" route family. */
export const handler = lambdaHandler('auth', awsServices);
