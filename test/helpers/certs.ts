// Test certificates generated at run time with the openssl CLI in a temporary directory: a CA,
// a server certificate for 127.0.0.1 and localhost (usable as a peer certificate too), client
// certificates with chosen subject CNs, and a client certificate from a different CA.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A PEM certificate and key on disk. */
export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

export interface TestCerts {
  readonly dir: string;
  /** The CA that signed the server and client certificates. */
  readonly ca: CertPair;
  /** SAN IP:127.0.0.1 and DNS:localhost; serverAuth and clientAuth. */
  readonly server: CertPair;
  /** Client certificates by subject CN, signed by `ca`. */
  readonly clients: Readonly<Record<string, CertPair>>;
  /** A second, unrelated CA. */
  readonly foreignCa: CertPair;
  /** A client certificate signed by `foreignCa` (its CN is "foreign-client"). */
  readonly foreignClient: CertPair;
  /** A file's bytes (for TLS options of test clients). */
  pem(path: string): Buffer;
  /** Removes the directory. */
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

function newKey(dir: string, name: string): string {
  const key = join(dir, `${name}.key`);
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", key]);
  return key;
}

function makeCa(dir: string, name: string, cn: string): CertPair {
  const key = newKey(dir, name);
  const cert = join(dir, `${name}.crt`);
  openssl(dir, [
    "req", "-x509", "-new", "-key", key, "-out", cert, "-days", "2", "-subj", `/CN=${cn}`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return { cert, key };
}

function signLeaf(dir: string, ca: CertPair, name: string, cn: string, extensions: string): CertPair {
  const key = newKey(dir, name);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(dir, ["req", "-new", "-key", key, "-out", csr, "-subj", `/CN=${cn}`]);
  openssl(dir, [
    "x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-set_serial", `0x${randomBytes(8).toString("hex")}`,
    "-days", "2", "-out", cert, "-extfile", ext,
  ]);
  return { cert, key };
}

const CLIENT_EXT = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n";
const SERVER_EXT = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n";

/** Generates the CA, the server certificate and one client certificate per CN. */
export function makeTestCerts(clientCns: readonly string[] = ["client"]): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), "hypercache-certs-"));
  const ca = makeCa(dir, "ca", "hypercache test CA");
  const server = signLeaf(dir, ca, "server", "localhost", SERVER_EXT);
  const clients: Record<string, CertPair> = {};
  clientCns.forEach((cn, i) => {
    clients[cn] = signLeaf(dir, ca, `client-${i}`, cn, CLIENT_EXT);
  });
  const foreignCa = makeCa(dir, "foreign-ca", "some other CA");
  const foreignClient = signLeaf(dir, foreignCa, "foreign-client", "foreign-client", CLIENT_EXT);
  return {
    dir,
    ca,
    server,
    clients,
    foreignCa,
    foreignClient,
    pem: (path) => readFileSync(path),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
