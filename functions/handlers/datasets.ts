import { awsServices } from '../composition/aws.js';
import { lambdaHandler } from '../http/lambda.js';

/** Lambda entry of the "datasets" route family. */
export const handler = lambdaHandler('datasets', awsServices);
