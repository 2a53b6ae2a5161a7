// The owner checks of pushed records (conditional writes) as SetRequest and RemoveRequest carry
// them: one list for the whole call (expected_owners, which every node knows) or, for a batch
// that mixes lists or records without one, each distinct list once and a number per entry.
import { create } from "@bufbuild/protobuf";
import { badRequest } from "../core/errors.js";
import { REPLICATION_MAX } from "../core/limits.js";
import type { OwnerChecks } from "../transport/index.js";
import { OwnerListSchema, type OwnerList } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";

/** The owner-check fields of SetRequest and RemoveRequest. */
export interface WireOwnerChecks {
  readonly expectedOwners: string[];
  readonly ownerLists: OwnerList[];
  readonly entryOwnerLists: number[];
}

const NO_CHECKS: WireOwnerChecks = Object.freeze({ expectedOwners: [], ownerLists: [], entryOwnerLists: [] });

/**
 * `checks` as those fields: expected_owners when every record has the same list (what every
 * receiver knows), else one number per entry into owner_lists (0: no check).
 */
export function toWireOwnerChecks(checks: OwnerChecks | undefined): WireOwnerChecks {
  if (checks === undefined || checks.length === 0) return NO_CHECKS;
  const first = checks[0];
  if (first !== undefined && first.length > 0 && checks.every((c) => c === first)) return { expectedOwners: [...first], ownerLists: [], entryOwnerLists: [] };
  const numbers = new Map<string, number>();
  const ownerLists: OwnerList[] = [];
  const entryOwnerLists = checks.map((c) => {
    if (c === undefined || c.length === 0) return 0;
    // Node ids hold no comma (NODE_ID_CHARS).
    const id = c.join(",");
    let n = numbers.get(id);
    if (n === undefined) {
      ownerLists.push(create(OwnerListSchema, { ids: [...c] }));
      n = ownerLists.length;
      numbers.set(id, n);
    }
    return n;
  });
  return { expectedOwners: [], ownerLists, entryOwnerLists };
}

/**
 * The owner checks of a request with `count` entries. BAD_REQUEST for anything that would skip a
 * check the sender meant or is out of bounds: both forms at once, lists without entry numbers,
 * numbers that do not fit the entries or the lists, an empty referenced list, more lists than
 * entries, a list longer than REPLICATION_MAX.
 */
export function fromWireOwnerChecks(req: Readonly<WireOwnerChecks>, count: number): OwnerChecks | undefined {
  const numbered = req.ownerLists.length > 0 || req.entryOwnerLists.length > 0;
  if (req.expectedOwners.length > 0) {
    if (numbered) throw badRequest("owner checks given both as expected_owners and per entry");
    checkListSize(req.expectedOwners);
    return new Array<readonly string[]>(count).fill(req.expectedOwners);
  }
  if (!numbered) return undefined;
  if (req.entryOwnerLists.length !== count) throw badRequest(`${req.entryOwnerLists.length} owner checks for ${count} entries`);
  if (req.ownerLists.length > count) throw badRequest(`${req.ownerLists.length} owner lists for ${count} entries`);
  for (const list of req.ownerLists) checkListSize(list.ids);
  return req.entryOwnerLists.map((n) => {
    if (n === 0) return undefined;
    const list = req.ownerLists[n - 1];
    if (list === undefined) throw badRequest(`owner list ${n} of ${req.ownerLists.length}`);
    return list.ids;
  });
}

function checkListSize(ids: readonly string[]): void {
  if (ids.length === 0 || ids.length > REPLICATION_MAX) throw badRequest(`an owner list holds ${ids.length} ids (1 to ${REPLICATION_MAX})`);
}
