// gRPC server reflection (grpc.reflection.v1 and v1alpha) on the peer port, so that `buf curl`
// and grpcurl list and call the peer methods without a local copy of the proto. It answers from
// the descriptors compiled into gen/proto: list_services, file_by_filename and
// file_containing_symbol (the file first, then its imports); extensions are not used here, so
// those questions get NOT_FOUND. It sits behind the peer gate like every other peer call.
import { createRegistry, toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { file_grpc_reflection_v1_reflection, ServerReflection as ReflectionV1 } from "../../gen/proto/grpc/reflection/v1/reflection_pb.js";
import { file_grpc_reflection_v1alpha_reflection, ServerReflection as ReflectionV1Alpha } from "../../gen/proto/grpc/reflection/v1alpha/reflection_pb.js";
import { file_hypercache_peer_v1_peer, PeerService } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";

/** gRPC status NOT_FOUND, as reflection error responses carry it. */
const NOT_FOUND = 5;

/** A reflection question, in the shape both versions share. */
type Question =
  | { case: "fileByFilename"; value: string }
  | { case: "fileContainingSymbol"; value: string }
  | { case: "fileContainingExtension"; value: unknown }
  | { case: "allExtensionNumbersOfType"; value: string }
  | { case: "listServices"; value: string }
  | { case: undefined; value?: undefined };

/** A reflection answer, in the shape both versions share. */
type Answer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: Array<{ name: string }> } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/** Answers reflection questions about the services served on the peer port. */
export class ReflectionAnswers {
  private readonly registry = createRegistry(file_hypercache_peer_v1_peer, file_grpc_reflection_v1_reflection, file_grpc_reflection_v1alpha_reflection);
  private readonly files = new Map<string, DescFile>();
  private readonly services = [PeerService.typeName, ReflectionV1.typeName, ReflectionV1Alpha.typeName];

  constructor() {
    for (const f of [file_hypercache_peer_v1_peer, file_grpc_reflection_v1_reflection, file_grpc_reflection_v1alpha_reflection]) this.addFile(f);
  }

  private addFile(f: DescFile): void {
    this.files.set(f.proto.name, f);
    for (const d of f.dependencies) this.addFile(d);
  }

  answer(q: Question): Answer {
    switch (q.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: this.services.map((name) => ({ name })) } };
      case "fileByFilename": {
        const f = this.files.get(q.value);
        return f ? this.fileAnswer(f) : notFound(`no file ${q.value}`);
      }
      case "fileContainingSymbol": {
        const f = this.fileOf(q.value);
        return f ? this.fileAnswer(f) : notFound(`no symbol ${q.value}`);
      }
      case "allExtensionNumbersOfType":
        return this.registry.getMessage(q.value) ? { case: "allExtensionNumbersResponse", value: { baseTypeName: q.value, extensionNumber: [] } } : notFound(`no message ${q.value}`);
      case "fileContainingExtension":
        return notFound("no extensions are defined");
      default:
        return { case: "errorResponse", value: { errorCode: 3, errorMessage: "empty reflection request" } };
    }
  }

  /** The file declaring `symbol`: a message, enum or service, or a member of one (field, method, value). */
  private fileOf(symbol: string): DescFile | undefined {
    const name = symbol.startsWith(".") ? symbol.slice(1) : symbol;
    const desc = this.registry.get(name) ?? this.registry.get(name.slice(0, Math.max(0, name.lastIndexOf("."))));
    return desc?.file;
  }

  /** The file's descriptor, then its imports (transitively), each once. */
  private fileAnswer(f: DescFile): Answer {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const add = (d: DescFile) => {
      if (seen.has(d.proto.name)) return;
      seen.add(d.proto.name);
      out.push(toBinary(FileDescriptorProtoSchema, d.proto));
      for (const dep of d.dependencies) add(dep);
    };
    add(f);
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out } };
  }
}

function notFound(message: string): Answer {
  return { case: "errorResponse", value: { errorCode: NOT_FOUND, errorMessage: message } };
}

/** Registers both reflection services on a Connect router. */
export function addReflectionRoutes(router: ConnectRouter, answers: ReflectionAnswers): void {
  router.service(ReflectionV1, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield { validHost: req.host, originalRequest: req, messageResponse: answers.answer(req.messageRequest) };
    },
  });
  router.service(ReflectionV1Alpha, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield { validHost: req.host, originalRequest: req, messageResponse: answers.answer(req.messageRequest) };
    },
  });
}

/** Path prefixes of the reflection services, as standard gRPC clients call them (no /internal). */
export const REFLECTION_PATHS: readonly string[] = Object.freeze([`/${ReflectionV1.typeName}/`, `/${ReflectionV1Alpha.typeName}/`]);
