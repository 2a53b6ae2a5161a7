export { Metrics } from "./metrics.js";
export { COUNTERS, GAUGES, METRIC_HELP, type CounterName, type GaugeName, type MetricName } from "./metric-names.js";
