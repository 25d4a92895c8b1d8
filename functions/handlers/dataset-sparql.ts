import { awsLambda } from '../composition/aws.js';
import { familyEntry } from '../http/lambda.js';

/** Entry points of the "dataset-sparql" route family: `handler` on Lambda, `mount` in the embedded server. */
export const { handler, mount } = familyEntry('dataset-sparql', awsLambda);
