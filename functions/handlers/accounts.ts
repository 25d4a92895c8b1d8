import { awsServices } from '../composition/aws.js';
import { lambdaHandler } from '../http/lambda.js';

/** Lambda entry of the "accounts" route family. */
export const handler = lambdaHandler('accounts', awsServices);
