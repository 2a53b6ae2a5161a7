// The ceiling for a single Node process: the same GET and PUT routes as hypercache-server,
// served by bare node:http from a Map, with no framework, no validation and no metadata.
import http from "node:http";

const port = Number(process.argv[2]);
const node = "baseline";
const store = new Map();
const PREFIX = "/v1/cache/";

http
  .createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const url = req.url ?? "";
    const key = decodeURIComponent(url.slice(PREFIX.length).split("?")[0]);
    if (req.method === "GET") {
      const v = store.get(key);
      if (v === undefined) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": v.length });
      res.end(v);
      return;
    }
    if (req.method === "PUT") {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const v = Buffer.concat(chunks);
        store.set(key, v);
        const body = JSON.stringify({ key, stored: true, bytes: v.length, node, owners: [node] });
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    res.statusCode = 405;
    res.end();
  })
  .listen(port, "127.0.0.1", () => process.stdout.write("ready\n"));
