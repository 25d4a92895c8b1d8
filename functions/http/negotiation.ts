/**
 * The format of a response, chosen once for every route that writes data (export, describe,
 * SPARQL endpoints, saved-query runs): rdf/negotiate.ts decides, this turns a refusal into 406.
 */
import { NotAcceptableError } from '../domain/shared/errors.js';
import type { RdfFormat, ResultFormat } from '../rdf/formats.js';
import { negotiate, type Offer } from '../rdf/negotiate.js';
import type { HttpRequest } from './types.js';

/** The path suffix wins, else the Accept header; NotAcceptableError (406) says what to ask for instead. */
export function chooseFormat(req: HttpRequest, offer: Extract<Offer, { kind: 'rdf' }>): { format: RdfFormat; gzip: boolean };
export function chooseFormat(req: HttpRequest, offer: Extract<Offer, { kind: 'results' }>): { format: ResultFormat; gzip: boolean };
export function chooseFormat(req: HttpRequest, offer: Offer): { format: RdfFormat | ResultFormat; gzip: boolean } {
  const chosen = offer.kind === 'rdf' ? negotiate(req.headers.accept, req.path, offer) : negotiate(req.headers.accept, req.path, offer);
  if ('refused' in chosen) throw new NotAcceptableError(chosen.refused);
  return chosen;
}
