// Cluster commands on the management listeners: members and watch.
import type { Command } from "commander";
import type { ClusterEvent, MembersView } from "@hypercache/client/node";
import { EXIT, UsageError } from "../exit-codes.js";
import type { Runner } from "../main.js";
import type { Colors } from "../output.js";

/** Metrics shown in a heartbeat line on a terminal (the JSON output has all of them). */
const HEARTBEAT_METRICS = ["dist.write.attempts", "dist.write.quorum_failures", "dist.hinted.queued", "dist.members.alive"];

function stateColor(c: Colors, state: string): string {
  return state === "alive" ? c.green(state) : state === "suspect" ? c.yellow(state) : c.red(state);
}

export function membersTable(m: MembersView, c: Colors): string {
  const rows = m.members.map((x) => [x.id === m.node ? `${x.id}*` : x.id, x.address, x.state, String(x.incarnation), x.last_seen]);
  const head = ["NODE", "ADDRESS", "STATE", "INC", "LAST SEEN"];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const fmt = (r: string[], color = false) => r.map((v, i) => (color && i === 2 ? stateColor(c, v) + " ".repeat(Math.max(0, (width[i] as number) - v.length)) : v.padEnd(width[i] as number))).join("  ").trimEnd();
  return [
    c.dim(`membership v${m.membership_version} as ${m.node} sees it, replication ${m.replication}`),
    c.bold(fmt(head)),
    ...rows.map((r) => fmt(r, true)),
  ].join("\n");
}

function eventLine(e: ClusterEvent, c: Colors): string {
  if (e.type === "members") {
    return `${c.cyan("members")} v${e.data.membership_version} from ${e.data.node}: ${e.data.members.map((m) => `${m.id} ${stateColor(c, m.state)}`).join(", ")}`;
  }
  const shown = HEARTBEAT_METRICS.filter((k) => e.data[k] !== undefined).map((k) => `${k.slice(5)}=${e.data[k]}`);
  return `${c.dim("heartbeat")} ${e.endpoint} ${shown.join(" ")}`;
}

/** The event types `watch` can show. */
const WATCH_EVENTS: readonly string[] = ["members", "heartbeat"];

/** The --events list: known names only (a typo would watch for an event that never comes). */
function eventNames(text: string): Set<string> {
  const names = text.split(",").map((s) => s.trim());
  const unknown = names.find((n) => !WATCH_EVENTS.includes(n));
  if (unknown !== undefined) throw new UsageError(`--events: unknown event type ${JSON.stringify(unknown)}; expected a comma-separated list of ${WATCH_EVENTS.join(", ")}`);
  return new Set(names);
}

export function registerClusterCommands(program: Command, run: Runner): void {
  program
    .command("members")
    .description("the cluster's membership as a node's management listener reports it")
    .action(
      run(async ({ client, out }) => {
        const m = await client.members();
        out.result(m, () => membersTable(m, out.color));
        return EXIT.OK;
      }),
    );

  program
    .command("watch")
    .description("stream membership changes and heartbeats (one JSON document per line when not on a terminal); Ctrl-C ends it")
    .option("-n, --count <n>", "stop after n events")
    .option("--events <names>", `comma-separated event types to show: ${WATCH_EVENTS.join(", ")}`, WATCH_EVENTS.join(","))
    .action(
      run<{ count?: string; events: string }>(async ({ client, out, io, opts }) => {
        const count = opts.count === undefined ? Infinity : Number(opts.count);
        if (!(count > 0 && (count === Infinity || Number.isInteger(count)))) throw new UsageError(`--count: expected a positive integer, got ${JSON.stringify(opts.count)}`);
        const wanted = eventNames(opts.events);
        // The watch reconnects by itself (a dead node, a dropped stream): say so on stderr, so a
        // watch that waits is not mistaken for a quiet cluster.
        const w = await client.watch({
          onStatus: (s) => {
            if (s.state === "down") out.note(`watch: ${s.reason}; reconnecting in ${Math.ceil(s.retryInMs / 1000)} s (attempt ${s.attempt})`);
          },
        });
        let interrupted = false;
        const stop = io.onInterrupt(() => {
          interrupted = true;
          w.close();
        });
        let seen = 0;
        try {
          for await (const e of w) {
            if (!wanted.has(e.type)) continue;
            out.result(e, () => eventLine(e, out.color));
            if (++seen >= count) break;
          }
        } finally {
          stop();
          w.close();
        }
        return interrupted ? EXIT.INTERRUPTED : EXIT.OK;
      }),
    );
}
