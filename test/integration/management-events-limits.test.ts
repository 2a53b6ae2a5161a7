// The management listener of real nodes: HEAD /cluster/events answers the stream's headers
// without a body and without subscribing; GET /cluster/events takes at most SSE_SUBSCRIBERS_MAX
// (256) subscribers at once, one more being 503 UNAVAILABLE with Retry-After, and a closed stream
// frees its slot; GET /cluster/members carries known_nodes (the ids counted towards quorum
// sizes: the node itself, configured seeds, until removed by hand).
import http from "node:http";
import { expect } from "chai";
import { SSE_SUBSCRIBERS_MAX } from "../../src/core/limits.js";
import { call, type Reply } from "../helpers/http-call.js";
import { freePorts } from "../helpers/ports.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RawConnection } from "../helpers/raw-http.js";
import { eventually } from "./cluster-helpers.js";
import { expectEnvelope } from "../helpers/envelope.js";

type Json = Record<string, unknown>;

interface Stream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The whole body of a non-200 answer (a 200 stream is not read to its end). */
  readonly body: Promise<string>;
  /** Text of the stream received so far (200 only). */
  received(): string;
  close(): void;
}

/** GET /cluster/events on its own connection (no keep-alive agent); resolves with the status. */
function openStream(port: number): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "GET", path: "/cluster/events", headers: { Accept: "text/event-stream" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      const body = new Promise<string>((ok) => {
        res.on("data", (d: string) => {
          // A live stream is kept to its first 64 KiB: enough for the opening frames.
          if (text.length < 65_536) text += d;
        });
        res.on("end", () => ok(text));
        res.on("close", () => ok(text));
      });
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body, received: () => text, close: () => req.destroy() });
    });
    // After the answer, errors (the test closing the stream) settle nothing.
    req.on("error", reject);
    req.end();
  });
}

describe("management listener: /cluster/events limits and known_nodes on real nodes", function () {
  this.timeout(60_000);

  describe("one node, no seeds", () => {
    let node: NodeProcess;
    const streams: Stream[] = [];
    const raws: RawConnection[] = [];

    before(async () => {
      node = await startNode({ id: "events-cap-1" });
    });
    after(async () => {
      for (const s of streams.splice(0)) s.close();
      for (const c of raws.splice(0)) c.destroy();
      await node?.stop("SIGKILL");
    });

    /** Opens `n` more streams, 32 at a time; each must be answered 200. */
    async function openMore(n: number): Promise<void> {
      for (let done = 0; done < n; ) {
        const batch = Math.min(32, n - done);
        const opened = await Promise.all(Array.from({ length: batch }, () => openStream(node.mgmtPort)));
        streams.push(...opened);
        const statuses = opened.map((s) => s.status);
        expect(statuses.filter((s) => s !== 200), `streams ${streams.length - batch + 1}..${streams.length}`).to.deep.equal([]);
        done += batch;
      }
    }

    it("GET /cluster/members: known_nodes of a single node is an array holding only its own id", async () => {
      const r = await call(`${node.mgmt}/cluster/members`);
      expect(r.status).to.equal(200);
      const body = r.json<{ known_nodes: unknown; node: string }>();
      expect(body.known_nodes).to.be.an("array");
      expect(body.known_nodes).to.deep.equal(["events-cap-1"]);
      expect((body.known_nodes as unknown[]).every((id) => typeof id === "string")).to.equal(true);
    });

    it("the members frame of the event stream carries the same known_nodes", async () => {
      const s = await openStream(node.mgmtPort);
      try {
        expect(s.status).to.equal(200);
        const frame = await eventually(
          async () => s.received(),
          (t) => /event: members\ndata: .*\n/.test(t),
          5_000,
          20,
        );
        const data = /event: members\ndata: (.*)\n/.exec(frame)?.[1];
        expect(data, frame.slice(0, 300)).to.be.a("string");
        expect((JSON.parse(data as string) as Json).known_nodes).to.deep.equal(["events-cap-1"]);
      } finally {
        s.close();
      }
    });

    it("HEAD /cluster/events: 200, the event-stream content type, no body, and the same connection then serves another request", async () => {
      const c = await RawConnection.open(node.mgmtPort);
      raws.push(c);
      await c.write("HEAD /cluster/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
      const r = await c.read({ headOnly: true });
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.equal("text/event-stream; charset=utf-8");
      expect(r.headers["cache-control"]).to.equal("no-cache");
      // Nothing of a stream follows the head: the next bytes are the answer to the next request.
      await c.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      const next = await c.read();
      expect(next.status, `bytes after the HEAD answer: ${next.body.toString().slice(0, 200)}`).to.equal(200);
      expect(next.json()).to.include({ status: "ok" });
      expect(c.pending.length).to.equal(0);
    });

    it(`HEADs held open take no subscriber slot: with 3 HEAD connections open, ${SSE_SUBSCRIBERS_MAX} GET streams are all 200`, async () => {
      expect(SSE_SUBSCRIBERS_MAX).to.equal(256);
      for (let i = 0; i < 3; i++) {
        const c = await RawConnection.open(node.mgmtPort);
        raws.push(c);
        await c.write("HEAD /cluster/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        expect((await c.read({ headOnly: true })).status).to.equal(200);
      }
      await openMore(SSE_SUBSCRIBERS_MAX);
      expect(streams).to.have.length(SSE_SUBSCRIBERS_MAX);
      expect(raws.every((c) => !c.endedByPeer), "the HEAD connections are still open").to.equal(true);
    });

    it(`subscriber ${SSE_SUBSCRIBERS_MAX + 1} is refused 503 UNAVAILABLE with the envelope and Retry-After, and the open streams keep flowing`, async () => {
      expect(streams).to.have.length(SSE_SUBSCRIBERS_MAX);
      const extra = await openStream(node.mgmtPort);
      const text = await extra.body;
      expectEnvelope({ status: extra.status, headers: extra.headers, body: Buffer.from(text) }, 503, "UNAVAILABLE", /256 subscribers/);
      expect(extra.headers["retry-after"], "Retry-After").to.match(/^[1-9][0-9]*$/);
      expect(Number(extra.headers["retry-after"])).to.equal(3);
      // The last stream opened gets a new heartbeat frame after the refusal (one a second).
      const last = streams[streams.length - 1] as Stream;
      const heartbeats = () => last.received().split("event: heartbeat\n").length - 1;
      const before = heartbeats();
      expect(last.received()).to.match(/^retry: 3000\n\n/);
      expect(await eventually(async () => heartbeats(), (n) => n > before, 5_000, 50), "heartbeat frames on the last stream").to.be.above(before);
    });

    it("closing one stream frees its slot: the next GET is 200 again, and one more after it is 503", async () => {
      (streams.shift() as Stream).close();
      const next = await eventually(
        async () => {
          const s = await openStream(node.mgmtPort);
          if (s.status !== 200) s.close();
          return s;
        },
        (s) => s.status === 200,
        5_000,
        50,
      );
      expect(next.status).to.equal(200);
      streams.push(next);
      const over = await openStream(node.mgmtPort);
      await over.body;
      expect(over.status).to.equal(503);
    });

    it("after every stream is closed the slots are all free again", async () => {
      for (const s of streams.splice(0)) s.close();
      // All 256 slots free: 256 streams opened at once are all 200 (retried while closes land).
      const refused = await eventually(
        async () => {
          const opened = await Promise.all(Array.from({ length: SSE_SUBSCRIBERS_MAX }, () => openStream(node.mgmtPort)));
          const n = opened.filter((s) => s.status !== 200).length;
          for (const s of opened) s.close();
          return n;
        },
        (n) => n === 0,
        8_000,
        200,
      );
      expect(refused, "streams refused out of 256").to.equal(0);
      const health = await call(`${node.mgmt}/health`);
      expect(health.status).to.equal(200);
    });
  });

  describe("one node with configured seeds that are not running", () => {
    let node: NodeProcess;
    before(async () => {
      const [p1, p2, p3] = await freePorts(3);
      node = await startNode({ id: "kn-1", env: { SERVICE_SEEDS: `zz-seed@127.0.0.1:${p1},aa-seed@127.0.0.1:${p2},127.0.0.1:${p3}` } });
    });
    after(async () => {
      await node?.stop("SIGKILL");
    });

    const knownNodes = async () => {
      const r: Reply = await call(`${node.mgmt}/cluster/members`);
      expect(r.status).to.equal(200);
      return r.json<{ known_nodes: string[] }>().known_nodes;
    };

    it("known_nodes lists the node and its seeds with ids, sorted (a bare host:port seed has no id to count)", async () => {
      expect(await knownNodes()).to.deep.equal(["aa-seed", "kn-1", "zz-seed"]);
    });

    it("DELETE /cluster/members/aa-seed removes it from known_nodes", async () => {
      const del = await call(`${node.mgmt}/cluster/members/aa-seed`, { method: "DELETE" });
      expect(del.status, del.body.toString()).to.equal(200);
      expect(await knownNodes()).to.deep.equal(["kn-1", "zz-seed"]);
    });
  });
});
