/**
 * The pacing figures as a run subscriber: it keeps the run's latest traffic figures and
 * the wait windows of the checks that ran (not skipped), and gives the figures
 * (src/engine/schedule.ts) at the end of the run.
 */
import type { Subscriber } from './events.js';
import { pacingFigures, type PacingFigures, type RunStats } from './schedule.js';

export interface PacingCollector {
  subscriber: Subscriber;
  /** The figures of the run so far, `wallMs` from its start; undefined before any check finished. */
  figures(wallMs: number): PacingFigures | undefined;
}

export function pacingCollector(): PacingCollector {
  let stats: RunStats | undefined;
  const waits: number[] = [];
  return {
    subscriber: (e) => {
      if (e.type !== 'check-finished') return;
      stats = e.stats;
      if (e.check.waitWindows !== undefined && e.result.outcome !== 'skip') waits.push(e.check.waitWindows);
    },
    figures: (wallMs) => (stats ? pacingFigures(stats, wallMs, waits) : undefined),
  };
}
