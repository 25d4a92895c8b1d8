import { awsLambda } from '../composition/aws.js';
import { familyEntry } from '../http/lambda.js';

/** Entry points of the "exports" route family: `handler` on Lambda, `mount` in the embedded server. */
export const { handler, mount } = familyEntry('exports', awsLambda);
