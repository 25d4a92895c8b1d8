/** The product's polyfill, loaded before aws-local-stepfunctions in the flow tests. */
import '../../../functions/adapters/local/promise-with-resolvers.js';

export {};
