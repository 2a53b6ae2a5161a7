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
  /** The index in `nodes` of each point's node. */
  private readonly nodeAt: Uint32Array;
  /**
   * The owners of each point, worked out on first use (ownersAtIndex): a ring of thousands of
   * members has hundreds of thousands of points, and building every owner list with the ring
   * held a rebuild for most of a second.
   */
  private readonly ownersAt: Array<Owners | undefined>;
  /** Owner lists handed out, by their node indexes (one object per distinct list). */
  private readonly interned = new Map<number | string, Owners>();
  /** Owners per point: `replication`, or every node of a smaller ring. */
  private readonly want: number;
  /** Whether an owner list's node indexes fit one exact number (nodes^want ≤ 2^53), else text. */
  private readonly numericKeys: boolean;
  /** Node ids on the ring, sorted. */
  readonly nodes: readonly string[];

  private constructor(points: Uint32Array, nodeAt: Uint32Array, nodes: readonly string[], readonly replication: number) {
    this.points = points;
    this.nodeAt = nodeAt;
    this.ownersAt = new Array<Owners | undefined>(points.length);
    this.nodes = nodes;
    this.want = Math.min(replication, nodes.length);
    this.numericKeys = Math.pow(nodes.length, this.want) <= Number.MAX_SAFE_INTEGER;
  }

  /**
   * Builds the ring of `nodeIds` (order and duplicates do not matter). `points` may cache each
   * node's virtual-node positions across builds (they depend only on the id).
   */
  static build(nodeIds: Iterable<string>, replication: number, virtualNodes = VIRTUAL_NODES, pointCache?: Map<string, Uint32Array>): HashRing {
    const nodes = [...new Set(nodeIds)].sort();
    const n = nodes.length;
    // Each point and its node's index as one number (point * n + index): sorting the numbers
    // orders the points, equal points by node id (the nodes are sorted). A comparator over
    // {point, node} objects took 0.6 s for 2,000 members (256,000 points), and the ring is
    // rebuilt whenever a member joins or goes.
    const keys = new Float64Array(n * virtualNodes);
    for (let i = 0, k = 0; i < n; i++) {
      const node = nodes[i] as string;
      let own = pointCache?.get(node);
      if (!own || own.length !== virtualNodes) {
        own = virtualPoints(node, virtualNodes);
        pointCache?.set(node, own);
      }
      for (let v = 0; v < virtualNodes; v++) keys[k++] = (own[v] as number) * n + i;
    }
    keys.sort();
    const total = keys.length;
    const points = new Uint32Array(total);
    const nodeAt = new Uint32Array(total);
    for (let j = 0; j < total; j++) {
      const key = keys[j] as number;
      const i = key % n;
      nodeAt[j] = i;
      points[j] = (key - i) / n;
    }
    return new HashRing(points, nodeAt, Object.freeze(nodes), replication);
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
    return this.ownersAtIndex(lo === points.length ? 0 : lo);
  }

  /** The owners of point `p`: the first `replication` distinct nodes from it clockwise. */
  private ownersAtIndex(p: number): Owners {
    return this.ownersAt[p] ?? (this.ownersAt[p] = this.resolveOwners(p));
  }

  private resolveOwners(p: number): Owners {
    const { nodeAt, nodes, want } = this;
    const total = nodeAt.length;
    const picked: number[] = [];
    for (let j = 0; picked.length < want && j < total; j++) {
      const i = nodeAt[(p + j) % total] as number;
      if (!picked.includes(i)) picked.push(i);
    }
    // One number while it stays exact (4,096 members and replication 3 do), else the list as text.
    const key = this.numericKeys ? picked.reduce((acc, i) => acc * nodes.length + i, 0) : picked.join(",");
    let owners = this.interned.get(key);
    if (!owners) {
      const ids = picked.map((i) => nodes[i] as string);
      const header = ids.join(",");
      owners = Object.freeze({ ids: Object.freeze(ids), primary: ids[0] as string, header, json: JSON.stringify(ids) });
      this.interned.set(key, owners);
    }
    return owners;
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
      fn(hashes, this.ownersAtIndex(i));
    }
  }

  /** True when both rings place every key on the same owners. */
  sameAs(other: HashRing): boolean {
    return this.replication === other.replication && this.hasNodes(other.nodes);
  }

  /** True when the ring's nodes are exactly `sortedIds` (sorted, without duplicates). */
  hasNodes(sortedIds: readonly string[]): boolean {
    return sameOwnerList(this.nodes, sortedIds);
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
