// The ceiling for one Node process: the GET and PUT routes of hypercache-server with the same
// answers (status, headers, JSON shape), served by bare node:http from a Map, with no framework,
// no validation and no cluster. Usage: node baseline-server.mjs <port> <node-id>
import http from "node:http";

const port = Number(process.argv[2]);
const node = process.argv[3] ?? "ceiling";
const owners = node;
const store = new Map();
const PREFIX = "/v1/cache/";
let clock = 0;

/** A version as the node writes it: microseconds, strictly increasing. */
function nextVersion() {
  clock = Math.max(clock + 1, Date.now() * 1000);
  return clock;
}

http
  .createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const url = req.url ?? "";
    const key = decodeURIComponent(url.slice(PREFIX.length).split("?")[0]);
    if (req.method === "GET") {
      const item = store.get(key);
      if (item === undefined) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.writeHead(200, {
        "Content-Type": "application/octet-stream",
        "Content-Length": item.value.length,
        "X-Cache-Version": String(item.version),
        "X-Cache-Origin": node,
        "X-Cache-Node": node,
        "X-Cache-Owners": owners,
      });
      res.end(item.value);
      return;
    }
    if (req.method === "PUT") {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const value = Buffer.concat(chunks);
        store.set(key, { value, version: nextVersion() });
        const body = JSON.stringify({ key, stored: true, bytes: value.length, node, owners: [node] });
        res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    res.statusCode = 405;
    res.end();
  })
  .listen(port, "127.0.0.1");
