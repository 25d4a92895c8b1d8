import { awsLambda } from '../composition/aws.js';
import { familyEntry } from '../http/lambda.js';

/** Entry points of the "search" route family (text search services): `handler` on Lambda, `mount` in the embedded server. */
export const { handler, mount } = familyEntry('search', awsLambda);
