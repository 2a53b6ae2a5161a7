// Endpoint discovery: `GET /v1/cluster/endpoints` on a client listener lists every member that is
// not dead with its advertised client (`api_url`) and management (`mgmt_url`) base URLs. Only
// those URLs are adopted, never the peer (dist) addresses of the membership. One refresh runs at a
// time; callers that ask meanwhile share it.
import type { EndpointPool } from "./endpoint-pool.js";
import type { Client } from "openapi-fetch";
import type { ClientEvent } from "./failover-transport.js";
import type { components, paths } from "./gen/client.js";
import { ENDPOINTS_SHAPE } from "./answer-shapes.js";
import { dataOf } from "./values.js";

export const DISCOVERY_PATH = "/v1/cluster/endpoints" as const;

/** The answer of `GET /v1/cluster/endpoints`. */
export type ClusterEndpoints = components["schemas"]["ClusterEndpoints"];

/** The answer's endpoints, keeping only well-formed entries (an old or odd node must not break us). */
export function parseEndpoints(body: unknown): ClusterEndpoints["endpoints"] {
  const list = (body as { endpoints?: unknown } | null)?.endpoints;
  if (!Array.isArray(list)) return [];
  return list.filter((e): e is ClusterEndpoints["endpoints"][number] => {
    const x = e as Record<string, unknown> | null;
    return x !== null && typeof x === "object" && typeof x.node === "string" && typeof x.api_url === "string" && typeof x.mgmt_url === "string" && (x.state === "alive" || x.state === "suspect");
  });
}

export class Discovery {
  private inflight: Promise<boolean> | undefined;
  /** Membership version of the last answer adopted. */
  membershipVersion: number | undefined;

  constructor(
    private readonly deps: {
      /** Typed requests over a failover transport of the client pool, without discovery of its own. */
      readonly api: Client<paths>;
      readonly apiPool: EndpointPool;
      readonly mgmtPool: EndpointPool;
      readonly onEvent?: ((e: ClientEvent) => void) | undefined;
    },
  ) {}

  /** Asks the cluster for its endpoints; resolves whether the client endpoints changed. */
  refresh(): Promise<boolean> {
    this.inflight ??= this.run().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async run(): Promise<boolean> {
    try {
      const data = dataOf(await this.deps.api.GET(DISCOVERY_PATH), ENDPOINTS_SHAPE, "a discovery answer");
      const body: Partial<ClusterEndpoints> = data;
      const found = parseEndpoints(body);
      const before = this.deps.apiPool.urls().join(" ");
      const adopted = this.deps.apiPool.adopt(found.map((e) => ({ url: e.api_url, node: e.node, state: e.state })));
      this.deps.mgmtPool.adopt(found.map((e) => ({ url: e.mgmt_url, node: e.node, state: e.state })));
      if (adopted && typeof body.membership_version === "number") this.membershipVersion = body.membership_version;
      const changed = this.deps.apiPool.urls().join(" ") !== before;
      this.deps.onEvent?.({ type: "discovery", endpoints: this.deps.apiPool.urls(), changed });
      return changed;
    } catch (err) {
      this.deps.onEvent?.({ type: "discovery-failed", error: err as Error });
      throw err;
    }
  }
}
