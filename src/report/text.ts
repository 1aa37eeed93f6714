/** Small text helpers shared by the renderers. */

/** JSON for display: strings as they are, everything else pretty-printed. */
export function displayValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** First line of `s`, cut to `max` characters with an ellipsis. */
export function oneLine(s: string | undefined, max = 200): string {
  if (!s) return '';
  const line = s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function runDurationMs(run: { startedAt: string; endedAt: string }): number {
  return Date.parse(run.endedAt) - Date.parse(run.startedAt);
}
