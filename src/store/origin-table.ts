// Origins (node ids) repeat across every record, so a record stores a 16-bit index into this
// table instead of a string pointer. Shared by the shards of one store.
import { CacheError } from "../core/errors.js";

/** Distinct origins a store can hold (node ids ever seen). */
export const ORIGINS_MAX = 65_535;

export class OriginTable {
  private readonly names: string[] = [""];
  private readonly ids = new Map<string, number>([["", 0]]);

  /** Index of `origin`, adding it when new. */
  idOf(origin: string): number {
    const known = this.ids.get(origin);
    if (known !== undefined) return known;
    if (this.names.length > ORIGINS_MAX) {
      throw new CacheError("BAD_REQUEST", `more than ${ORIGINS_MAX} distinct record origins`);
    }
    const id = this.names.length;
    this.names.push(origin);
    this.ids.set(origin, id);
    return id;
  }

  nameOf(id: number): string {
    return this.names[id] as string;
  }
}
