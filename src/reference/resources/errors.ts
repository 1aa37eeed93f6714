/** FhirError constructors for the failures the resource handlers raise. */
import { FhirError } from '../types.js';

/** 400 HPB-00101: malformed body or parameter (structure, JSON types, missing required fields). */
export function invalid(message: string): FhirError {
  return new FhirError(400, 'invalid', message, 'HPB-00101');
}

/** HPB-00101 with the given status (the mode's validationStatus for semantic problems, 422 for a changed subject). */
export function unprocessable(status: number, message: string): FhirError {
  return new FhirError(status, 'invalid', message, 'HPB-00101');
}

export function notFound(resourceType: string, id: string, code = 'HPB-00102'): FhirError {
  return new FhirError(404, 'not-found', `${resourceType}/${id} not found`, code);
}

export function conflict(code: string, message: string): FhirError {
  return new FhirError(409, 'conflict', message, code);
}

export function businessRule(code: string, message: string): FhirError {
  return new FhirError(422, 'business-rule', message, code);
}

export function forbidden(code: string, message: string): FhirError {
  return new FhirError(403, 'forbidden', message, code);
}
