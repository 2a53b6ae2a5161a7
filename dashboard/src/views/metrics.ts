// Metrics: per-second rates from the heartbeat frames over the last 5 minutes (a uPlot chart and
// the same figures as a table), with a pause that freezes the chart while samples keep arriving.
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import type { Live } from "../app.js";
import { rate } from "../format.js";
import { RATE_SERIES } from "../series.js";

const COLOURS = ["#2f6fde", "#d33", "#9b59b6", "#e08e0b", "#1a9b6c", "#0aa3b5", "#7a7a7a"];
const CHART_HEIGHT_PX = 260;

function chartData(live: Live): uPlot.AlignedData {
  return [live.history.times.toArray(), ...live.history.series.map((s) => s.toArray())];
}

export function Metrics(props: { live: Live }) {
  const { live } = props;
  const [paused, setPaused] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: CHART_HEIGHT_PX,
      series: [{}, ...RATE_SERIES.map((s, i) => ({ label: s.label, stroke: COLOURS[i], width: 1.5 }))],
      axes: [{ stroke: "currentColor" }, { stroke: "currentColor", size: 50 }],
      scales: { y: { range: (_u: uPlot, _min: number, max: number) => [0, Math.max(1, max)] as uPlot.Range.MinMax } },
      legend: { live: false },
      cursor: { show: true },
    };
    plot.current = new uPlot(opts, chartData(live), el);
    const onResize = () => plot.current?.setSize({ width: Math.max(280, el.clientWidth), height: CHART_HEIGHT_PX });
    addEventListener("resize", onResize);
    return () => {
      removeEventListener("resize", onResize);
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, []);

  useEffect(() => {
    if (!paused) plot.current?.setData(chartData(live));
  }, [live.tick, paused]);

  return html`
    <h2>Metrics</h2>
    <div class="toolbar">
      <button type="button" aria-pressed=${paused} onClick=${() => setPaused(!paused)}>${paused ? "Resume" : "Pause"}</button>
      <span class="note">${live.history.times.length} samples, one per heartbeat frame (at most 5 minutes)</span>
    </div>
    <figure class="chart">
      <div ref=${box} role="img" aria-label="Rates per second over the last 5 minutes; the table below has the figures"></div>
    </figure>
    <div class="scroll">
      <table id="rates-table">
        <caption class="sr-only">Current rates and 5-minute totals</caption>
        <thead><tr><th scope="col">Rate</th><th scope="col">Now (per s)</th><th scope="col">Last 5 min (total)</th></tr></thead>
        <tbody>
          ${RATE_SERIES.map(
            (s, i) => html`<tr key=${s.label}>
              <th scope="row"><span class="swatch" style=${{ background: COLOURS[i] }} aria-hidden="true"></span>${s.label}</th>
              <td class="num">${live.history.missing.has(s.label) ? "not reported" : rate(live.history.series[i]!.last())}</td>
              <td class="num">${live.history.missing.has(s.label) ? "–" : Math.round(live.history.windowTotal(i))}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  `;
}
