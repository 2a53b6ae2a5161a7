// HTTP/1.1 pipelining, one answer at a time. Node parses every request of a read (64 KiB) at
// once and calls the handler for each, while their answers wait in line behind the first: a
// client that sent 600 GETs of an 8 MiB value in one 38 KB write, and read nothing, made the node
// build 600 answers (4.8 GB) in one go and die out of memory. Here a request whose answer is not
// first in line waits to be handled until it is (Node hands it the socket then: its `socket`
// event), so a connection holds at most one answer being built or sent; Node stops reading the
// socket while that answer is not flushed. A connection with more than `maxWaiting` requests
// waiting is closed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

const WAITING = Symbol("hypercache.pipelinedWaiting");
type Counted = Socket & { [WAITING]?: number };

/** Requests of `socket` waiting for their turn to be answered. */
export function waitingAnswers(socket: Socket): number {
  return (socket as Counted)[WAITING] ?? 0;
}

export function answerInOrder<Req extends IncomingMessage, Res extends ServerResponse<Req>>(handler: (req: Req, res: Res) => void, maxWaiting: number): (req: Req, res: Res) => void {
  return (req, res) => {
    // The answer owns the socket: nothing is in line before it (the usual case).
    if (res.socket !== null) {
      handler(req, res);
      return;
    }
    const socket = req.socket as Counted;
    const waiting = (socket[WAITING] ?? 0) + 1;
    if (waiting > maxWaiting) {
      socket.destroy();
      return;
    }
    socket[WAITING] = waiting;
    res.once("socket", () => {
      socket[WAITING] = (socket[WAITING] ?? 1) - 1;
      // The answer before may have left its stall timer armed (listener-response.ts), and Node
      // hands the socket on without its keep-alive timer: this request starts with none.
      if (socket.timeout) socket.setTimeout(0);
      handler(req, res);
    });
  };
}
