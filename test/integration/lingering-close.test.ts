// An early answer on a closing connection reaches the client (lingering close): the node answers
// a request before reading its large body, and the client reads that answer only after it has sent
// the rest of the body. Without the lingering close the node destroys the socket with request bytes
// unread, the kernel sends a reset, and the client's kernel drops the answer it was holding.
import net from "node:net";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

/** Sends `head` and `bodyBytes` of zeros without reading, then reads until the server closes. */
function uploadThenRead(port: number, head: string, bodyBytes: number): Promise<{ answer: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.pause(); // nothing is read from the kernel until the whole body is sent
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", (e: Error) => resolve({ answer: Buffer.concat(chunks).toString("latin1"), error: (e as NodeJS.ErrnoException).code ?? e.message }));
    socket.on("close", () => resolve({ answer: Buffer.concat(chunks).toString("latin1") }));
    socket.on("connect", async () => {
      socket.write(head);
      const chunk = Buffer.alloc(64 * 1024);
      for (let sent = 0; sent < bodyBytes; sent += chunk.length) {
        if (!socket.write(chunk)) await new Promise((r) => socket.once("drain", r));
        // let the node answer (and, without lingering, close) while the upload is under way
        if (sent === 512 * 1024) await new Promise((r) => setTimeout(r, 200));
      }
      socket.resume();
    });
  });
}

describe("lingering close: an answer given before the body is read is not lost to a reset", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  before(async () => {
    node = await startNode({ id: "linger" });
  });
  after(async () => node?.stop());

  for (const [listener, target] of [
    ["management", "/cluster/members"],
    ["client", "/v1/cache/batch/get"],
  ] as const) {
    it(`${listener} listener: a 4 MiB body sent to ${target} with Connection: close still gets its answer`, async () => {
      const url = new URL(listener === "management" ? node.mgmt : node.api);
      const method = target === "/cluster/members" ? "GET" : "POST";
      const bytes = 4 * 1024 * 1024;
      const head = `${method} ${target} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`;
      const { answer, error } = await uploadThenRead(Number(url.port), head, bytes);
      expect(error, "the client saw a reset").to.equal(undefined);
      expect(answer).to.match(/^HTTP\/1\.1 (200|400|413) /);
    });
  }

  it("a request Node's parser refuses (a NUL in a header) with a 4 MiB body still gets its 400 envelope", async () => {
    const url = new URL(node.api);
    const bytes = 4 * 1024 * 1024;
    const head = `POST /v1/cache/batch/put HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer \x00\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`;
    const { answer, error } = await uploadThenRead(Number(url.port), head, bytes);
    expect(error, "the client saw a reset").to.equal(undefined);
    expect(answer).to.match(/^HTTP\/1\.1 400 /);
    expect(answer).to.contain('"code":"BAD_REQUEST"');
  });
});
