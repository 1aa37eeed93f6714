/**
 * The pacing figures as a run subscriber: it keeps the run's latest traffic figures and
 * the wait windows of the checks that ran (not skipped), apart for those whose work ran beside
 * the paced checks (started early), and gives the figures
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
  const overlapped: number[] = [];
  return {
    subscriber: (e) => {
      if (e.type !== 'check-finished') return;
      stats = e.stats;
      if (e.check.waitWindows !== undefined && e.result.outcome !== 'skip') (e.startedEarly ? overlapped : waits).push(e.check.waitWindows);
    },
    figures: (wallMs) => (stats ? pacingFigures(stats, wallMs, waits, overlapped) : undefined),
  };
}
