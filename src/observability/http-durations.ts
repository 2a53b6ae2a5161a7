// http.server.request.duration (OpenTelemetry HTTP semantic conventions): one histogram per
// node, recorded by the client and management listeners, with the attributes
// http.request.method, http.route (the route template; absent for unknown routes),
// http.response.status_code, url.scheme and server.port. A route's series are found by one
// map lookup on a number (method and status), so recording costs no allocation.
import { Histogram, type HistogramSeries } from "./histogram.js";

/** Methods the conventions name; anything else is recorded as "_OTHER". */
const METHODS = ["_OTHER", "GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"] as const;

function methodIndex(method: string): number {
  switch (method) {
    case "GET":
      return 1;
    case "HEAD":
      return 2;
    case "PUT":
      return 3;
    case "POST":
      return 4;
    case "DELETE":
      return 5;
    case "PATCH":
      return 6;
    case "OPTIONS":
      return 7;
    default:
      return 0;
  }
}

/** The series of one route template on one listener. */
export class RouteDurations {
  private readonly byKey = new Map<number, HistogramSeries>();

  constructor(
    private readonly histogram: Histogram,
    private readonly base: Readonly<Record<string, string | number>>,
  ) {}

  /** Records one request: its method, final status and duration in seconds. */
  record(method: string, status: number, seconds: number): void {
    const m = methodIndex(method);
    const key = m * 1000 + status;
    let s = this.byKey.get(key);
    if (s === undefined) {
      s = this.histogram.add({ ...this.base, "http.request.method": METHODS[m] as string, "http.response.status_code": status });
      this.byKey.set(key, s);
    }
    s.record(seconds);
  }
}

/** The request durations of one listener (its scheme and port are attributes of every series). */
export class ListenerDurations {
  private readonly routes = new Map<string, RouteDurations>();

  constructor(
    private readonly histogram: Histogram,
    private readonly listener: { readonly scheme: "http" | "https"; readonly port: number },
  ) {}

  /** The series of a route template ("" for a request no route matched). */
  route(template: string): RouteDurations {
    let r = this.routes.get(template);
    if (r === undefined) {
      const base: Record<string, string | number> = { "url.scheme": this.listener.scheme, "server.port": this.listener.port };
      // @koa/router names parameters ":id"; the route attribute uses the OpenAPI form "{id}".
      if (template !== "") base["http.route"] = template.replace(/:(\w+)/g, "{$1}");
      r = new RouteDurations(this.histogram, base);
      this.routes.set(template, r);
    }
    return r;
  }
}

/** The node's http.server.request.duration histogram. */
export class HttpServerDurations {
  readonly histogram = new Histogram();

  /** The durations of one listener. */
  listener(scheme: "http" | "https", port: number): ListenerDurations {
    return new ListenerDurations(this.histogram, { scheme, port });
  }
}
