// The Connect service of the peer transport: decodes wire messages, calls the PeerHandler,
// encodes the answer. No data-path decisions are made here.
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { CacheError } from "../core/errors.js";
import type { ApplyOutcome, PeerHandler } from "../dist/index.js";
import {
  ApplyOutcome as WireOutcome,
  DrainResponseSchema,
  GetResponseSchema,
  GetResultSchema,
  HealthResponseSchema,
  KeysResponseSchema,
  PeerService,
  RemoveResponseSchema,
  SetResponseSchema,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromEntry, toEntry, toNumber } from "./convert.js";
import { toConnectError } from "./errors.js";

const OUTCOME: Readonly<Record<ApplyOutcome, WireOutcome>> = Object.freeze({
  applied: WireOutcome.APPLIED,
  stale: WireOutcome.STALE,
  refused: WireOutcome.REFUSED,
});

/** Wraps a handler so that every thrown error leaves as a ConnectError with our code. */
function guarded<A extends unknown[], R>(fn: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw toConnectError(err);
    }
  };
}

export function peerServiceImpl(handler: PeerHandler): Partial<ServiceImpl<typeof PeerService>> {
  return {
    set: guarded((req) => {
      const outcomes = handler.applyRecords(req.entries.map((e) => fromEntry({ ...e, tombstone: false })));
      return create(SetResponseSchema, { outcomes: outcomes.map((o) => OUTCOME[o]) });
    }),
    remove: guarded((req) => {
      const outcomes = handler.applyRecords(
        req.deletions.map((d) => ({
          key: d.key,
          value: "",
          version: toNumber(d.version),
          origin: d.origin,
          lastUpdatedMs: toNumber(d.deletedAtUnixMs),
          expiresAtMs: 0,
          tombstone: true,
        })),
      );
      return create(RemoveResponseSchema, { outcomes: outcomes.map((o) => OUTCOME[o]) });
    }),
    get: guarded((req) => {
      const records = handler.getRecords(req.keys);
      return create(GetResponseSchema, {
        node: handler.health().node,
        results: req.keys.map((key, i) => {
          const rec = records[i];
          return create(GetResultSchema, rec ? { key, found: true, entry: toEntry(rec) } : { key, found: false });
        }),
      });
    }),
    keys: guarded((req) => {
      const page = handler.keysPage(req.cursor, req.limit, req.q);
      return create(KeysResponseSchema, { keys: page.keys, nextCursor: page.nextCursor, truncated: page.truncated });
    }),
    drain: guarded(() => {
      handler.drain();
      return create(DrainResponseSchema, { draining: true });
    }),
    health: guarded(() => {
      const h = handler.health();
      if (h.draining) throw new CacheError("DRAINING", "node is draining");
      return create(HealthResponseSchema, { node: h.node, draining: h.draining, incarnation: BigInt(h.incarnation) });
    }),
  };
}

/** The Connect routes of the peer service. */
export function createPeerRoutes(handler: PeerHandler): (router: ConnectRouter) => void {
  return (router) => {
    router.service(PeerService, peerServiceImpl(handler));
  };
}
