// A TCP relay on loopback that passes a client's first flight (its TLS ClientHello) to `target`
// and holds everything after it (the rest of the handshake, and what follows) until released:
// a handshake held back across a change of the server's CA, as a client can hold it.
import net, { type AddressInfo } from "node:net";

export interface HandshakeRelay {
  readonly port: number;
  /** Lets the held bytes through, and everything after them. */
  release(): void;
  close(): void;
}

export async function handshakeRelay(target: number): Promise<HandshakeRelay> {
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  const relay = net.createServer((down) => {
    const up = net.connect(target, "127.0.0.1");
    let first = true;
    down.on("data", (d) => {
      if (first) {
        first = false;
        up.write(d);
        return;
      }
      down.pause();
      void released.then(() => {
        up.write(d);
        down.resume();
      });
    });
    up.on("data", (d) => down.write(d));
    up.on("close", () => down.destroy());
    down.on("close", () => up.destroy());
    up.on("error", () => undefined);
    down.on("error", () => undefined);
  });
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
  return { port: (relay.address() as AddressInfo).port, release, close: () => relay.close() };
}
