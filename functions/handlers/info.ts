import { awsServices } from '../composition/aws.js';
import { lambdaHandler } from '../http/lambda.js';

/** Lambda entry of the "info" route family. */
export const handler = lambdaHandler('info', awsServices);
