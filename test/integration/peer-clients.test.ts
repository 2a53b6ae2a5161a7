// Other teams call peers from other languages with Connect or gRPC clients generated from
// proto/. This proves the dist listener answers them: the Connect protocol (HTTP/1.1 JSON and
// HTTP/2 binary), gRPC and gRPC-Web through clients generated from proto/, a stock @grpc/grpc-js
// client that loads the .proto file at run time (bare /package.Service/Method path), and the
// fixed paths of the spec. Every route requires the peer token.
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  EntrySchema,
  GetRequestSchema,
  HealthRequestSchema,
  KeysRequestSchema,
  PeerService,
  SetRequestSchema,
  ApplyOutcome,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const TOKEN = "peer-secret-for-tests";
const auth = (token = TOKEN) => ({ headers: { authorization: `Bearer ${token}` } });

describe("peer listener answers Connect, gRPC and gRPC-Web clients generated from proto/", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  let base: string;

  before(async () => {
    node = await startNode({ id: "pc1", env: { SERVICE_PEER_TOKEN: TOKEN } });
    base = `http://127.0.0.1:${node.distPort}`;
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  const transports: Array<[string, () => Transport]> = [
    ["Connect over HTTP/1.1 (JSON)", () => createConnectTransport({ httpVersion: "1.1", baseUrl: `${base}/internal` })],
    ["Connect over HTTP/2 (binary)", () => createConnectTransport({ httpVersion: "2", baseUrl: `${base}/internal`, useBinaryFormat: true })],
    ["gRPC over HTTP/2", () => createGrpcTransport({ baseUrl: `${base}/internal` })],
    ["gRPC-Web over HTTP/1.1", () => createGrpcWebTransport({ httpVersion: "1.1", baseUrl: `${base}/internal` })],
  ];

  for (const [name, make] of transports) {
    it(`${name}: Health, Set, Get and Keys with the peer token`, async () => {
      const client = createClient(PeerService, make());
      const health = await client.health(create(HealthRequestSchema, {}), auth());
      expect(health.node).to.equal("pc1");
      const version = BigInt(Date.now()) * 1000n;
      const key = `via-${name.split(" ")[0]?.toLowerCase()}-${name.length}`;
      const set = await client.set(
        create(SetRequestSchema, { from: "test", entries: [create(EntrySchema, { key, value: new Uint8Array([0, 1, 254, 255]), version, origin: "test" })] }),
        auth(),
      );
      expect(set.outcomes).to.deep.equal([ApplyOutcome.APPLIED]);
      const got = await client.get(create(GetRequestSchema, { keys: [key] }), auth());
      expect(got.results[0]?.found).to.equal(true);
      expect(Array.from(got.results[0]?.entry?.value ?? [])).to.deep.equal([0, 1, 254, 255]);
      expect(got.results[0]?.entry?.version).to.equal(version);
      const keys: string[] = [];
      let cursor = "";
      do {
        const page = await client.keys(create(KeysRequestSchema, { cursor, limit: 100 }), auth());
        keys.push(...page.keys);
        cursor = page.nextCursor;
      } while (cursor !== "");
      expect(keys).to.include(key);
    });

    it(`${name}: a missing or wrong token is Unauthenticated`, async () => {
      const client = createClient(PeerService, make());
      for (const opts of [{}, auth("wrong-token")]) {
        const err = await client.health(create(HealthRequestSchema, {}), opts).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(ConnectError);
        expect((err as ConnectError).code).to.equal(Code.Unauthenticated);
      }
    });
  }

  it("a stock @grpc/grpc-js client loading proto/ at run time calls the bare gRPC path", async () => {
    const protoPath = fileURLToPath(new URL("../../proto/hypercache/peer/v1/peer.proto", import.meta.url));
    const def = protoLoader.loadSync(protoPath, { longs: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      hypercache: { peer: { v1: { PeerService: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & Record<string, (...a: unknown[]) => void> } } };
    };
    const client = new pkg.hypercache.peer.v1.PeerService(`127.0.0.1:${node.distPort}`, grpc.credentials.createInsecure());
    const call = (method: string, req: object, token?: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const md = new grpc.Metadata();
        if (token) md.set("authorization", `Bearer ${token}`);
        client[method]?.(req, md, (err: grpc.ServiceError | null, res: Record<string, unknown>) => (err ? reject(err) : resolve(res)));
      });
    const h = await call("Health", {}, TOKEN);
    expect(h.node).to.equal("pc1");
    const err = (await call("Health", {}).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
    client.close();
  });

  it("the fixed paths answer JSON with proto field names and refuse a missing or wrong token with 401", async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const set = await fetch(`${base}/internal/set`, {
      method: "POST",
      headers,
      body: JSON.stringify({ from: "curl", entries: [{ key: "fixed-path", value: Buffer.from("hi").toString("base64"), version: String(Date.now() * 1000), origin: "curl" }] }),
    });
    expect(set.status).to.equal(200);
    const setAnswer = (await set.json()) as { outcomes: string[]; held: Array<{ origin: string }>; node: string };
    expect(setAnswer.outcomes).to.deep.equal(["APPLY_OUTCOME_APPLIED"]);
    expect(setAnswer.node, "the answer names the node that stored it").to.equal("pc1");
    expect(setAnswer.held.map((h) => h.origin)).to.deep.equal(["curl"]);
    // One shard per page: follow next_cursor to the end.
    const found: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const page = (await (await fetch(`${base}/internal/keys?q=fixed-*&limit=10&cursor=${encodeURIComponent(cursor)}`, { headers })).json()) as Record<string, unknown>;
      expect(page).to.have.all.keys("keys", "next_cursor", "truncated");
      found.push(...(page.keys as string[]));
      cursor = page.next_cursor as string;
      pages++;
    } while (cursor !== "");
    expect(found).to.deep.equal(["fixed-path"]);
    expect(pages).to.equal(32);
    expect((await fetch(`${base}/health`, { headers })).status).to.equal(200);
    for (const h of [{}, { authorization: "Bearer nope" }] as Array<Record<string, string>>) {
      expect((await fetch(`${base}/health`, { headers: h })).status).to.equal(401);
      expect((await fetch(`${base}/internal/keys`, { headers: h })).status).to.equal(401);
      expect((await fetch(`${base}/internal/probe?target=x`, { headers: h })).status).to.equal(401);
    }
  });
});
