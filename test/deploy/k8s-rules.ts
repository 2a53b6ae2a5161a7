// The rules the rendered chart must keep, as pure functions over Kubernetes objects. Each returns
// the list of problems it found (empty when the objects keep the rule), so that a test can show
// both that the chart keeps a rule and that the rule catches a chart that breaks it.
import type { IStatefulSet } from "kubernetes-models/apps/v1";
import type { IContainer, IEnvVar, IPodSpec, IProbe, IService } from "kubernetes-models/v1";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [field: string]: unknown };
  [field: string]: unknown;
}

type Labels = Record<string, string>;

const MIB = 1024 * 1024;
/**
 * Seconds the server may still need after the drain: the leave announcement (up to 5 s), in-flight
 * client requests (30 s), stopping its loops and exporters (10 s), and 5 s of margin.
 */
export const AFTER_DRAIN_SECONDS = 50;
/** Environment variables whose value is a credential. */
const SECRET_ENV = /TOKEN|PASSWORD|SECRET/;
/** Environment variables whose value is the path of a certificate, key or policy file. */
const FILE_ENV = /^SERVICE_(API_TLS_CERT|API_TLS_KEY|API_TLS_CLIENT_CA|MGMT_TLS_CERT|MGMT_TLS_KEY|DIST_TLS_CERT|DIST_TLS_KEY|DIST_TLS_CA|AUTH_CONFIG)$/;

export function ofKind<T>(objects: readonly K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

export function theStatefulSet(objects: readonly K8sObject[]): IStatefulSet {
  const sets = ofKind<IStatefulSet>(objects, "StatefulSet");
  if (sets.length !== 1) throw new Error(`expected one StatefulSet, found ${sets.length}`);
  return sets[0]!;
}

export function podSpec(sts: IStatefulSet): IPodSpec {
  const spec = sts.spec?.template.spec;
  if (!spec) throw new Error("the StatefulSet has no pod spec");
  return spec;
}

export function mainContainer(sts: IStatefulSet): IContainer {
  const c = podSpec(sts).containers[0];
  if (!c) throw new Error("the pod has no container");
  return c;
}

function envVar(c: IContainer, name: string): IEnvVar | undefined {
  return (c.env ?? []).find((e) => e.name === name);
}

/** A Go-style duration ("60s", "1m30s", "500ms") in seconds. */
export function durationSeconds(text: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  const unit: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2]!]!, 0);
}

/** Bytes in a Kubernetes quantity ("1Gi", "1536Mi", "2G", 1073741824). */
export function quantityBytes(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  if (!m) throw new Error(`not a memory quantity: ${JSON.stringify(q)}`);
  const factor: Record<string, number> = { "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: MIB, Gi: 1024 * MIB, Ti: 1024 * 1024 * MIB };
  return Number(m[1]) * factor[m[2] ?? ""]!;
}

/**
 * The environment the kubelet gives a container: `$(VAR)` in a value expands only variables
 * defined earlier in the list, `$$` is a literal `$`, an unknown reference stays as written.
 * `fields` answers `fieldRef`s (metadata.name, metadata.namespace); a `secretKeyRef` becomes
 * `<secret:name/key>`.
 */
export function expandEnv(env: readonly IEnvVar[], fields: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of env) {
    let value: string;
    if (e.valueFrom?.fieldRef) value = fields[e.valueFrom.fieldRef.fieldPath] ?? `<field:${e.valueFrom.fieldRef.fieldPath}>`;
    else if (e.valueFrom?.secretKeyRef) value = `<secret:${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}>`;
    else value = (e.value ?? "").replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string | undefined) => (name === undefined ? "$" : (out.get(name) ?? whole)));
    out.set(e.name, value);
  }
  return out;
}

function matches(selector: Labels | undefined, labels: Labels): boolean {
  return !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** Every selector of the chart (Services, PDB, StatefulSet, NetworkPolicy, spread constraints) selects the pods. */
export function selectorProblems(objects: readonly K8sObject[]): string[] {
  const sts = theStatefulSet(objects);
  const pod = (sts.spec?.template.metadata?.labels ?? {}) as Labels;
  const problems: string[] = [];
  const check = (what: string, selector: unknown) => {
    if (!matches(selector as Labels | undefined, pod)) problems.push(`${what} selector ${JSON.stringify(selector)} does not select the pods ${JSON.stringify(pod)}`);
  };
  check(`StatefulSet ${sts.metadata?.name}`, sts.spec?.selector.matchLabels);
  for (const svc of ofKind<IService>(objects, "Service")) check(`Service ${svc.metadata?.name}`, svc.spec?.selector);
  for (const pdb of ofKind<K8sObject & { spec: { selector: { matchLabels: Labels } } }>(objects, "PodDisruptionBudget")) check(`PodDisruptionBudget ${pdb.metadata.name}`, pdb.spec.selector.matchLabels);
  for (const np of ofKind<K8sObject & { spec: { podSelector: { matchLabels: Labels }; ingress?: Array<{ from?: Array<{ podSelector?: { matchLabels: Labels } }> }> } }>(objects, "NetworkPolicy")) {
    check(`NetworkPolicy ${np.metadata.name}`, np.spec.podSelector.matchLabels);
    for (const rule of np.spec.ingress ?? []) for (const peer of rule.from ?? []) if (peer.podSelector) check(`NetworkPolicy ${np.metadata.name} ingress`, peer.podSelector.matchLabels);
  }
  for (const t of podSpec(sts).topologySpreadConstraints ?? []) check(`topology spread on ${t.topologyKey}`, t.labelSelector?.matchLabels);
  const headless = ofKind<IService>(objects, "Service").find((s) => s.metadata?.name === sts.spec?.serviceName);
  if (!headless) problems.push(`StatefulSet serviceName ${sts.spec?.serviceName} names no Service of the chart`);
  else {
    if (headless.spec?.clusterIP !== "None") problems.push(`Service ${sts.spec?.serviceName} is not headless (clusterIP: None)`);
    if (headless.spec?.publishNotReadyAddresses !== true) problems.push(`Service ${sts.spec?.serviceName} does not publish not-ready addresses, so starting nodes cannot find their seeds`);
  }
  return problems;
}

function portOf(addr: string | undefined): number | undefined {
  const m = /:(\d+)$/.exec(addr ?? "");
  return m ? Number(m[1]) : undefined;
}

/**
 * Probe, Service and NetworkPolicy ports name container ports; the container ports are the ones
 * the server listens on (SERVICE_*_ADDR); probes speak HTTPS exactly when management TLS is on.
 */
export function portProblems(objects: readonly K8sObject[]): string[] {
  const sts = theStatefulSet(objects);
  const c = mainContainer(sts);
  const ports = c.ports ?? [];
  const problems: string[] = [];
  const exists = (what: string, port: unknown) => {
    if (!ports.some((p) => p.name === port || p.containerPort === port)) problems.push(`${what} port ${JSON.stringify(port)} is not a container port`);
  };
  const probes: Array<[string, IProbe | undefined]> = [["liveness", c.livenessProbe], ["readiness", c.readinessProbe], ["startup", c.startupProbe]];
  for (const [name, probe] of probes) {
    if (!probe) continue;
    if (probe.httpGet) exists(`${name} probe`, probe.httpGet.port);
    if (probe.tcpSocket) exists(`${name} probe`, probe.tcpSocket.port);
  }
  for (const svc of ofKind<IService>(objects, "Service")) for (const p of svc.spec?.ports ?? []) exists(`Service ${svc.metadata?.name}`, p.targetPort ?? p.port);
  for (const np of ofKind<K8sObject & { spec: { ingress?: Array<{ ports?: Array<{ port?: unknown }> }> } }>(objects, "NetworkPolicy")) {
    for (const rule of np.spec.ingress ?? []) for (const p of rule.ports ?? []) exists(`NetworkPolicy ${np.metadata.name}`, p.port);
  }
  const env = expandEnv(c.env ?? [], { "metadata.name": "pod-0", "metadata.namespace": "ns" });
  const listeners: Array<[string, string]> = [["api", "SERVICE_API_ADDR"], ["mgmt", "SERVICE_MGMT_ADDR"], ["peer", "SERVICE_DIST_ADDR"]];
  for (const [name, variable] of listeners) {
    const declared = ports.find((p) => p.name === name)?.containerPort;
    const listening = portOf(env.get(variable));
    if (declared === undefined || declared !== listening) problems.push(`container port ${name} (${declared}) is not the port of ${variable} (${env.get(variable)})`);
  }
  const scheme = env.has("SERVICE_MGMT_TLS_CERT") ? "HTTPS" : "HTTP";
  for (const [name, probe] of probes) {
    if (probe?.httpGet && (probe.httpGet.scheme ?? "HTTP") !== scheme) problems.push(`${name} probe speaks ${probe.httpGet.scheme ?? "HTTP"} to a management listener that speaks ${scheme}`);
  }
  return problems;
}

/** /livez and /readyz, plain GETs: no credentials, no `$(VAR)` (the kubelet never expands it there). */
export function probeProblems(objects: readonly K8sObject[]): string[] {
  const c = mainContainer(theStatefulSet(objects));
  const problems: string[] = [];
  const expect: Array<[string, IProbe | undefined, string]> = [["liveness", c.livenessProbe, "/livez"], ["readiness", c.readinessProbe, "/readyz"]];
  for (const [name, probe, path] of expect) {
    if (!probe?.httpGet) {
      problems.push(`no ${name} httpGet probe`);
      continue;
    }
    if (probe.httpGet.path !== path) problems.push(`${name} probe asks ${probe.httpGet.path}, not ${path}`);
  }
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
    if (probe?.exec) problems.push("an exec probe (the image has no shell and the probes need no credentials)");
    for (const h of probe?.httpGet?.httpHeaders ?? []) {
      if (h.value.includes("$(")) problems.push(`probe header ${h.name} holds ${JSON.stringify(h.value)}: the kubelet never expands $(VAR) in probes`);
      if (/^authorization$/i.test(h.name)) problems.push("a probe sends credentials; /livez and /readyz need none");
    }
  }
  return problems;
}

/** preStop is a sleep action (no shell), and the grace period outlasts preStop + drain + 50 s. */
export function shutdownProblems(objects: readonly K8sObject[]): string[] {
  const sts = theStatefulSet(objects);
  const c = mainContainer(sts);
  const problems: string[] = [];
  const preStop = c.lifecycle?.preStop;
  const sleep = preStop?.sleep?.seconds;
  if (!preStop || sleep === undefined || preStop.exec || preStop.httpGet || preStop.tcpSocket) problems.push(`preStop is not a plain sleep action: ${JSON.stringify(preStop)}`);
  const drain = c.env?.find((e) => e.name === "SERVICE_DRAIN_TIMEOUT")?.value;
  if (drain === undefined) return [...problems, "SERVICE_DRAIN_TIMEOUT is not set, so the grace period cannot be checked against it"];
  const grace = podSpec(sts).terminationGracePeriodSeconds ?? 30;
  const needed = (sleep ?? 0) + durationSeconds(drain) + AFTER_DRAIN_SECONDS;
  if (!(grace > needed)) problems.push(`terminationGracePeriodSeconds ${grace} does not exceed preStop ${sleep ?? 0} s + drain ${drain} + ${AFTER_DRAIN_SECONDS} s = ${needed} s`);
  return problems;
}

/** Non-root, read-only root filesystem with an emptyDir on /tmp, no capabilities, no API token. */
export function securityProblems(objects: readonly K8sObject[]): string[] {
  const sts = theStatefulSet(objects);
  const pod = podSpec(sts);
  const c = mainContainer(sts);
  const problems: string[] = [];
  const runAsNonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
  const runAsUser = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
  if (runAsNonRoot !== true) problems.push("runAsNonRoot is not true");
  if (runAsUser === 0) problems.push("runAsUser is 0");
  if (c.securityContext?.readOnlyRootFilesystem !== true) problems.push("readOnlyRootFilesystem is not true");
  if (c.securityContext?.allowPrivilegeEscalation !== false) problems.push("allowPrivilegeEscalation is not false");
  if (c.securityContext?.privileged) problems.push("the container is privileged");
  if (!(c.securityContext?.capabilities?.drop ?? []).includes("ALL")) problems.push("capabilities do not drop ALL");
  if ((c.securityContext?.capabilities?.add ?? []).length > 0) problems.push(`capabilities added: ${c.securityContext?.capabilities?.add?.join(",")}`);
  const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === "/tmp");
  if (!tmp || !pod.volumes?.some((v) => v.name === tmp.name && v.emptyDir)) problems.push("/tmp is not a writable emptyDir (the root filesystem is read-only)");
  if (pod.automountServiceAccountToken !== false) problems.push("the pod mounts a service account token it does not need");
  return problems;
}

/**
 * Credentials only by reference: no credential as a literal value, the peer token from a Secret
 * (protected mode would otherwise refuse every peer), file paths inside mounted Secrets.
 * `external` lists the Secrets that exist outside the chart; any other reference must be rendered.
 */
export function secretProblems(objects: readonly K8sObject[], external: readonly string[]): string[] {
  const sts = theStatefulSet(objects);
  const pod = podSpec(sts);
  const c = mainContainer(sts);
  const problems: string[] = [];
  const rendered = ofKind<K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> }>(objects, "Secret");
  const resolvable = (name: string, key?: string) =>
    external.includes(name) || rendered.some((s) => s.metadata.name === name && (key === undefined || key in (s.data ?? {}) || key in (s.stringData ?? {})));
  for (const e of c.env ?? []) {
    if (!SECRET_ENV.test(e.name)) continue;
    const ref = e.valueFrom?.secretKeyRef;
    if (e.value !== undefined || !ref) problems.push(`${e.name} is not taken from a Secret`);
    else if (!resolvable(ref.name ?? "", ref.key)) problems.push(`${e.name} refers to ${ref.name}/${ref.key}, which is neither rendered nor an expected existing Secret`);
  }
  const peerToken = envVar(c, "SERVICE_PEER_TOKEN") ?? envVar(c, "SERVICE_AUTH_TOKEN");
  const peerTls = envVar(c, "SERVICE_DIST_TLS_CERT");
  if (!peerToken?.valueFrom?.secretKeyRef && !peerTls) problems.push("no peer credential: protected mode refuses every peer that is not on loopback");
  const secretMounts = (c.volumeMounts ?? []).filter((m) => pod.volumes?.some((v) => v.name === m.name && v.secret));
  for (const v of pod.volumes ?? []) if (v.secret && !resolvable(v.secret.secretName ?? "")) problems.push(`volume ${v.name} mounts ${v.secret.secretName}, which is neither rendered nor an expected existing Secret`);
  for (const e of c.env ?? []) {
    if (!FILE_ENV.test(e.name)) continue;
    if (!secretMounts.some((m) => e.value?.startsWith(`${m.mountPath}/`))) problems.push(`${e.name}=${e.value} is not a file of a mounted Secret`);
  }
  for (const cm of ofKind<K8sObject & { data?: Record<string, string> }>(objects, "ConfigMap")) {
    for (const k of Object.keys(cm.data ?? {})) if (SECRET_ENV.test(k.toUpperCase())) problems.push(`ConfigMap ${cm.metadata.name} holds ${k}`);
  }
  return problems;
}

/** NODE_OPTIONS carries --max-old-space-size = `percent` of the memory limit, in MiB. */
export function heapProblems(objects: readonly K8sObject[], percent: number): string[] {
  const c = mainContainer(theStatefulSet(objects));
  const limit = c.resources?.limits?.memory;
  if (limit === undefined) return ["no memory limit to derive the heap from"];
  const expected = Math.floor((quantityBytes(limit as string | number) * percent) / 100 / MIB);
  const flag = /--max-old-space-size=(\d+)/.exec(envVar(c, "NODE_OPTIONS")?.value ?? "");
  if (!flag) return ["NODE_OPTIONS has no --max-old-space-size"];
  return Number(flag[1]) === expected ? [] : [`--max-old-space-size=${flag[1]}, expected ${expected} (${percent}% of ${limit})`];
}

/**
 * Node ids and addresses, as the kubelet expands them in every pod of the StatefulSet (in a
 * namespace of the caller's choice): the node id is the pod name, the dist address is the pod's
 * own name under the headless Service, and the seeds list every replica as id@fqdn:port.
 * Built by env expansion only: no command or shell wraps the server.
 */
export function addressProblems(objects: readonly K8sObject[], namespace: string, clusterDomain = "cluster.local"): string[] {
  const sts = theStatefulSet(objects);
  const c = mainContainer(sts);
  const problems: string[] = [];
  if (c.command) problems.push(`the container overrides the image entrypoint with ${JSON.stringify(c.command)}`);
  if ((c.args ?? []).some((a) => /\bsh\b|\$\(/.test(a))) problems.push(`the container args wrap the server: ${JSON.stringify(c.args)}`);
  const idRef = envVar(c, "SERVICE_NODE_ID")?.valueFrom?.fieldRef?.fieldPath;
  if (idRef !== "metadata.name") problems.push(`SERVICE_NODE_ID comes from ${idRef ?? "a literal"}, not metadata.name`);
  const name = sts.metadata?.name ?? "";
  const replicas = sts.spec?.replicas ?? 1;
  const peerPort = (c.ports ?? []).find((p) => p.name === "peer")?.containerPort;
  const fqdn = (i: number) => `${name}-${i}.${sts.spec?.serviceName}.${namespace}.svc.${clusterDomain}:${peerPort}`;
  const expected = Array.from({ length: replicas }, (_, i) => `${name}-${i}@${fqdn(i)}`);
  for (let i = 0; i < replicas; i++) {
    const env = expandEnv(c.env ?? [], { "metadata.name": `${name}-${i}`, "metadata.namespace": namespace });
    if (env.get("SERVICE_NODE_ID") !== `${name}-${i}`) problems.push(`pod ${i}: SERVICE_NODE_ID is ${env.get("SERVICE_NODE_ID")}`);
    if (env.get("SERVICE_DIST_ADDR") !== fqdn(i)) problems.push(`pod ${i}: SERVICE_DIST_ADDR is ${env.get("SERVICE_DIST_ADDR")}, expected ${fqdn(i)}`);
    const seeds = (env.get("SERVICE_SEEDS") ?? "").split(",").filter((s) => s !== "");
    if (JSON.stringify([...seeds].sort()) !== JSON.stringify([...expected].sort())) problems.push(`pod ${i}: SERVICE_SEEDS is ${seeds.join(",")}, expected ${expected.join(",")}`);
  }
  return problems;
}

/** One PodDisruptionBudget over the pods, with maxUnavailable 1. */
export function disruptionProblems(objects: readonly K8sObject[]): string[] {
  const pdbs = ofKind<K8sObject & { spec: { maxUnavailable?: unknown; minAvailable?: unknown } }>(objects, "PodDisruptionBudget");
  if (pdbs.length !== 1) return [`expected one PodDisruptionBudget, found ${pdbs.length}`];
  const spec = pdbs[0]!.spec;
  return spec.maxUnavailable === 1 && spec.minAvailable === undefined ? [] : [`PodDisruptionBudget allows ${JSON.stringify(spec)}, expected maxUnavailable: 1`];
}
