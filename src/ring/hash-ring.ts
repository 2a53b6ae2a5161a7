// The consistent-hash ring: each node places VIRTUAL_NODES points; a key's owners are the
// first `replication` distinct nodes clockwise from the key's hash, primary first. Pure: every
// node builds the same ring from the same member ids. Owner lists are computed once per ring
// point at build time, so a lookup is one hash and one binary search, with no allocation.
import { hash32 } from "../core/hash.js";
import { VIRTUAL_NODES } from "../core/limits.js";

/** The owners of a key, shared by every key that maps to the same ring point. */
export interface Owners {
  /** Owner node ids, primary first. */
  readonly ids: readonly string[];
  readonly primary: string;
  /** The ids joined with ",", ready for the X-Cache-Owners header. */
  readonly header: string;
  /** The ids as a JSON array, ready to splice into a response body. */
  readonly json: string;
}

/**
 * True when two owner lists name the same ids in the same order (primary first): the check a
 * replica makes before it acknowledges a conditional write, and a primary before it counts the
 * owner that forwarded one.
 */
export function sameOwnerList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

export class HashRing {
  private readonly points: Uint32Array;
  private readonly ownersAt: readonly Owners[];
  /** Node ids on the ring, sorted. */
  readonly nodes: readonly string[];

  private constructor(points: Uint32Array, ownersAt: readonly Owners[], nodes: readonly string[], readonly replication: number) {
    this.points = points;
    this.ownersAt = ownersAt;
    this.nodes = nodes;
  }

  /**
   * Builds the ring of `nodeIds` (order and duplicates do not matter). `points` may cache each
   * node's virtual-node positions across builds (they depend only on the id).
   */
  static build(nodeIds: Iterable<string>, replication: number, virtualNodes = VIRTUAL_NODES, pointCache?: Map<string, Uint32Array>): HashRing {
    const nodes = [...new Set(nodeIds)].sort();
    const placed: Array<{ point: number; node: string }> = [];
    for (const node of nodes) {
      let own = pointCache?.get(node);
      if (!own || own.length !== virtualNodes) {
        own = virtualPoints(node, virtualNodes);
        pointCache?.set(node, own);
      }
      for (let v = 0; v < virtualNodes; v++) placed.push({ point: own[v] as number, node });
    }
    placed.sort((a, b) => a.point - b.point || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
    const points = Uint32Array.from(placed, (p) => p.point);
    const want = Math.min(replication, nodes.length);
    const interned = new Map<string, Owners>();
    const ownersAt = placed.map((_, i) => {
      const ids: string[] = [];
      for (let j = 0; ids.length < want && j < placed.length; j++) {
        const node = (placed[(i + j) % placed.length] as { node: string }).node;
        if (!ids.includes(node)) ids.push(node);
      }
      const header = ids.join(",");
      let owners = interned.get(header);
      if (!owners) {
        owners = Object.freeze({ ids: Object.freeze(ids), primary: ids[0] as string, header, json: JSON.stringify(ids) });
        interned.set(header, owners);
      }
      return owners;
    });
    return new HashRing(points, ownersAt, Object.freeze(nodes), replication);
  }

  /** Owners of `key`; an empty ring has no owners. */
  ownersOf(key: string): Owners {
    return this.ownersAtHash(hash32(key));
  }

  /** Owners of the ring position `hash`. */
  ownersAtHash(hash: number): Owners {
    const points = this.points;
    if (points.length === 0) return NO_OWNERS;
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((points[mid] as number) < hash) lo = mid + 1;
      else hi = mid;
    }
    return this.ownersAt[lo === points.length ? 0 : lo] as Owners;
  }

  /** True when `nodeId` is among the owners of `key`. */
  isOwner(key: string, nodeId: string): boolean {
    return this.ownersOf(key).ids.includes(nodeId);
  }

  /**
   * Calls `fn` once per ring point with the number of 32-bit hash values that map to it (the arc
   * from the previous point, exclusive, to this one, inclusive; the first point also takes the
   * wrap-around) and its owners. The arcs of a non-empty ring add up to 2^32 exactly.
   */
  forEachArc(fn: (hashes: number, owners: Owners) => void): void {
    const points = this.points;
    const n = points.length;
    for (let i = 0; i < n; i++) {
      const here = points[i] as number;
      const hashes = i === 0 ? here + HASH_SPACE - (points[n - 1] as number) : here - (points[i - 1] as number);
      fn(hashes, this.ownersAt[i] as Owners);
    }
  }

  /** True when both rings place every key on the same owners. */
  sameAs(other: HashRing): boolean {
    return this.replication === other.replication && this.nodes.length === other.nodes.length && this.nodes.every((n, i) => n === other.nodes[i]);
  }
}

/** The ring positions of one node's virtual nodes. */
export function virtualPoints(node: string, virtualNodes: number): Uint32Array {
  const out = new Uint32Array(virtualNodes);
  for (let v = 0; v < virtualNodes; v++) out[v] = hash32(`${node}#${v}`);
  return out;
}

/** Number of distinct 32-bit hash values. */
export const HASH_SPACE = 2 ** 32;

const NO_OWNERS: Owners = Object.freeze({ ids: Object.freeze([]), primary: "", header: "", json: "[]" });
