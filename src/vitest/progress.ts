/** Wait notices go from the worker to the reporter through the console channel. */
export const WAIT_MARKER = '[fhir-conformance:wait]';

export function announceWait(reason: string, ms: number, client?: string): void {
  if (ms < 1000) return;
  const who = client ? ` (${client})` : '';
  console.warn(`${WAIT_MARKER} waiting ${(ms / 1000).toFixed(1)} s${who}: ${reason}`);
}
