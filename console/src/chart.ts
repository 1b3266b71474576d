import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A line chart of one series over time (seconds since the epoch), with its figures also given as text. */
export function LineChart({
  title,
  times,
  values,
  label,
  color,
}: {
  title: string;
  times: number[];
  values: number[];
  label: string;
  color: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const plot = new uPlot(
      {
        width: Math.max(280, box.current.clientWidth),
        height: 200,
        series: [{}, { label, stroke: color, width: 2, fill: `${color}22`, points: { show: times.length < 2 } }],
        axes: [{}, { size: 50 }],
        legend: { show: false },
        cursor: { show: true },
      },
      [times, values],
      box.current,
    );
    return () => plot.destroy();
  }, [times, values, label, color]);
  const total = values.reduce((sum, v) => sum + v, 0);
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <div
      ref=${box}
      role="img"
      aria-label=${`${title}: ${values.length} points, max ${Math.max(0, ...values)}, sum ${total}`}
    ></div>
  </figure>`;
}
