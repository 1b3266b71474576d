import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatTick } from './format';
import { locale, t } from './i18n';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

/** Colours apart for the eye and from each other in grey (a channel or an outcome each). */
export const PALETTE = ['#1d4ed8', '#b45309', '#047857', '#7c3aed', '#be123c', '#0e7490', '#4d7c0f', '#57534e'];

/**
 * Lines over time (seconds since the epoch), one per series, with a legend; the time axis and the
 * legend's time in the operator's locale and zone (never uPlot's own English `12/4/26`, `6am`).
 * The figures are also given as text, for those who do not see the lines.
 */
export function TimeChart({ title, times, series }: { title: string; times: number[]; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  const writtenIn = locale();
  useEffect(() => {
    if (!box.current) return;
    const tick = (seconds: number, withDay: boolean) => formatTick(seconds * 1000, writtenIn, withDay);
    const plot = new uPlot(
      {
        width: Math.max(280, box.current.clientWidth),
        height: 200,
        series: [
          {
            label: t('at'),
            value: (_u, seconds: number | null) => (seconds === null ? '—' : tick(seconds, true)),
          },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            points: { show: times.length < 2 },
          })),
        ],
        axes: [
          {
            // Room for a tick with its day (`04/12, 16:00`, `2026/12/04 16:00`), so that none overlaps.
            space: 90,
            // The day where it changes (and on the first tick), the hour on every tick.
            values: (_u, splits: number[]) =>
              splits.map((seconds, i) => tick(seconds, i === 0 || dayOf(seconds) !== dayOf(splits[i - 1]))),
          },
          { size: 50 },
        ],
        legend: { show: true, live: false },
        cursor: { show: true },
      },
      [times, ...series.map((s) => s.values)],
      box.current,
    );
    return () => plot.destroy();
  }, [times, series, writtenIn]);
  const summary = series
    .map((s) => `${s.label}: max ${Math.max(0, ...s.values)}, sum ${s.values.reduce((sum, v) => sum + v, 0)}`)
    .join('; ');
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${times.length} points. ${summary}`}></div>
    </figure>
  );
}

const dayOf = (seconds: number): string => new Date(seconds * 1000).toDateString();
