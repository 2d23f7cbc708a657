// A line or bar chart of a result, in inline SVG. Sizes are in viewBox units so the chart
// scales to the width it is given; colours come from CSS variables so both themes work.
import { formatNumber, niceTicks, type ChartShape } from '../lib/chart-shape';
import './result-chart.css';

const W = 640;
const H = 320;
const PAD = { top: 16, right: 16, bottom: 56, left: 56 };

export function ResultChart({ shape }: { shape: ChartShape }) {
  const summary = `${shape.kind === 'line' ? 'Line' : 'Bar'} chart of ${shape.series
    .map((s) => s.name)
    .join(', ')} by ${shape.xLabel}`;
  return (
    <figure className="chart">
      {shape.kind === 'line' ? (
        <Line shape={shape} label={summary} />
      ) : (
        <Bars shape={shape} label={summary} />
      )}
      {shape.series.length > 1 ? (
        <figcaption className="legend">
          {shape.series.map((s, i) => (
            <span key={s.name} className={`legend-item series-${i}`}>
              <span className="swatch" aria-hidden="true" /> {s.name}
            </span>
          ))}
        </figcaption>
      ) : null}
    </figure>
  );
}

function Line({ shape, label }: { shape: ChartShape; label: string }) {
  const all = shape.series.flatMap((s) => s.values);
  const ticks = niceTicks(Math.min(0, ...all), Math.max(...all));
  const lo = ticks[0]!;
  const hi = ticks[ticks.length - 1]!;
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const n = shape.labels.length;
  const x = (i: number) => PAD.left + (n === 1 ? innerW / 2 : (i * innerW) / (n - 1));
  const y = (v: number) => PAD.top + innerH - ((v - lo) / (hi - lo || 1)) * innerH;
  // At most six labels: they must stay apart on a phone, where the text is larger.
  const every = Math.max(1, Math.ceil(n / 6));
  return (
    <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg">
      <title>{label}</title>
      <YAxis ticks={ticks} y={y} />
      {shape.labels.map((text, i) =>
        i % every === 0 ? (
          <text
            key={i}
            x={x(i)}
            y={H - PAD.bottom + 18}
            className={(i / every) % 2 === 1 ? 'tick alt' : 'tick'}
            // The outermost labels stay inside the drawing.
            textAnchor={n > 1 && i === 0 ? 'start' : n > 1 && i === n - 1 ? 'end' : 'middle'}
          >
            {text}
          </text>
        ) : null,
      )}
      <text x={PAD.left + innerW / 2} y={H - 8} className="axis-label" textAnchor="middle">
        {shape.xLabel}
      </text>
      {shape.series.map((s, si) => (
        <g key={s.name} className={`series series-${si}`}>
          <polyline
            fill="none"
            points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
          />
          {n <= 60
            ? s.values.map((v, i) => (
                <circle key={i} cx={x(i)} cy={y(v)} r={3}>
                  <title>{`${shape.labels[i]}: ${formatNumber(v)}`}</title>
                </circle>
              ))
            : null}
        </g>
      ))}
    </svg>
  );
}

function Bars({ shape, label }: { shape: ChartShape; label: string }) {
  // Horizontal bars: category names stay readable on a narrow screen.
  const series = shape.series[0]!;
  const n = shape.labels.length;
  const rowH = 26;
  const left = 140;
  const height = PAD.top + n * rowH + 40;
  const ticks = niceTicks(Math.min(0, ...series.values), Math.max(0, ...series.values), 4);
  const lo = ticks[0]!;
  const hi = ticks[ticks.length - 1]!;
  const innerW = W - left - PAD.right - 40;
  const x = (v: number) => left + ((v - lo) / (hi - lo || 1)) * innerW;
  return (
    <svg viewBox={`0 0 ${W} ${height}`} role="img" aria-label={label} className="chart-svg">
      <title>{label}</title>
      {ticks.map((t) => (
        <g key={t}>
          <line x1={x(t)} x2={x(t)} y1={PAD.top} y2={PAD.top + n * rowH} className="grid-line" />
          <text x={x(t)} y={PAD.top + n * rowH + 16} className="tick" textAnchor="middle">
            {formatNumber(t)}
          </text>
        </g>
      ))}
      <text x={left + innerW / 2} y={height - 4} className="axis-label" textAnchor="middle">
        {series.name}
      </text>
      {shape.labels.map((text, i) => {
        const v = series.values[i] ?? 0;
        const top = PAD.top + i * rowH + 4;
        const x0 = x(Math.max(lo, Math.min(0, v)));
        const x1 = x(Math.max(0, v));
        return (
          <g key={i} className="series series-0">
            <text
              x={left - 8}
              y={top + rowH / 2}
              className="tick"
              textAnchor="end"
              dominantBaseline="middle"
            >
              {text}
            </text>
            <rect x={x0} y={top} width={Math.max(1, x1 - x0)} height={rowH - 8}>
              <title>{`${text}: ${formatNumber(v)}`}</title>
            </rect>
            <text x={x1 + 4} y={top + (rowH - 8) / 2} className="value" dominantBaseline="middle">
              {formatNumber(v)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function YAxis({ ticks, y }: { ticks: number[]; y: (v: number) => number }) {
  return (
    <g>
      {ticks.map((t) => (
        <g key={t}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} className="grid-line" />
          <text
            x={PAD.left - 6}
            y={y(t)}
            className="tick"
            textAnchor="end"
            dominantBaseline="middle"
          >
            {formatNumber(t)}
          </text>
        </g>
      ))}
    </g>
  );
}
