/**
 * report.json text: one record per line. The run info and the summary are
 * indented; then each check, requirement, observation, ledger entry,
 * exchange and body is one line of compact JSON (each member of the timeline too), so the file stays small,
 * `grep x-000123 report.json` shows a whole exchange, and two reports diff
 * line by line. Plain JSON: any parser reads it.
 */
import type { ReportDocument } from './types.js';

export function renderJson(doc: ReportDocument): string {
  const members = Object.entries(doc).map(([key, value]) => `  ${JSON.stringify(key)}: ${member(key, value)}`);
  return `{\n${members.join(',\n')}\n}\n`;
}

function member(key: string, value: unknown): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? '[]' : `[\n${value.map((v) => `    ${JSON.stringify(v)}`).join(',\n')}\n  ]`;
  }
  if (key === 'timeline') {
    // One line per member: the requests, waits and tokens are long lists of short tuples.
    const entries = Object.entries(value as Record<string, unknown>);
    return `{\n${entries.map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n  }`;
  }
  if (key === 'exchanges' || key === 'bodies') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0 ? '{}' : `{\n${entries.map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n  }`;
  }
  return JSON.stringify(value, null, 2).replace(/\n/g, '\n  ');
}
