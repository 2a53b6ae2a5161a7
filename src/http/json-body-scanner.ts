// Counting a batch body while it arrives: an incremental scanner over the raw bytes that follows
// strings and escapes, nesting depth, the names of the top-level object's members and the
// elements of one array member (`items` or `keys`). It refuses the body (400) as soon as that
// array passes the batch limit, the nesting passes its cap, or the body holds more JSON structure
// than a full batch needs, so a 16 MiB body of `{}` elements is refused after a few kilobytes
// instead of being parsed into millions of objects. It checks no syntax: JSON.parse still reads
// an accepted body (and reports malformed JSON).
import { badRequest } from "../core/errors.js";

/** What the scanner enforces. */
export interface JsonScanLimits {
  /** The top-level member whose array elements are counted ("items" or "keys"). */
  readonly field: string;
  /** Elements that array may hold. */
  readonly itemsMax: number;
  /** Nesting depth of arrays and objects at most (the top-level object is depth 1). */
  readonly depthMax: number;
  /**
   * Structure the whole body may hold: opened arrays and objects plus commas (about one per
   * JSON value), wherever they are, so junk outside the counted array is bounded too.
   */
  readonly structureMax: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Longest top-level member name kept for comparison (a name with \u escapes included). */
const NAME_BYTES_MAX = 64;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

export class JsonBodyScanner {
  private depth = 0;
  /** Container kind per depth: true for an object. */
  private readonly isObject: boolean[] = [];
  private inString = false;
  private escaped = false;
  /** The next string at depth 1 of an object is a member name. */
  private expectName = false;
  private name: number[] | undefined;
  private nameTooLong = false;
  private lastName = "";
  /** Inside the counted array (depth 2, the value of the member `field`). */
  private counting = false;
  private awaitingElement = false;
  private elements = 0;
  private structure = 0;

  constructor(private readonly limits: JsonScanLimits) {}

  /** Elements of the counted array seen so far. */
  get count(): number {
    return this.elements;
  }

  /** Scans the next bytes of the body; throws a 400 CacheError when a limit is passed. */
  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (this.inString) {
        i = this.inStringByte(chunk, i);
        continue;
      }
      if (isSpace(b)) continue;
      if (this.awaitingElement && this.depth === 2 && b !== CLOSE_ARRAY) this.countElement();
      switch (b) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 1 && this.expectName) {
            this.name = [];
            this.nameTooLong = false;
          }
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          this.open(b === OPEN_OBJECT);
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.depth === 2) this.counting = false;
          this.awaitingElement = false;
          this.depth = Math.max(0, this.depth - 1);
          break;
        case COMMA:
          this.addStructure();
          if (this.depth === 1 && this.isObject[1]) this.expectName = true;
          if (this.depth === 2 && this.counting) this.awaitingElement = true;
          break;
        case COLON:
          break;
        default:
          break;
      }
    }
  }

  /** One byte inside a string; returns the index to continue from. */
  private inStringByte(chunk: Uint8Array, i: number): number {
    // Fast path: runs of plain bytes of a value string are skipped without bookkeeping.
    if (this.name === undefined && !this.escaped) {
      while (i < chunk.length && chunk[i] !== QUOTE && chunk[i] !== BACKSLASH) i++;
      if (i >= chunk.length) return i;
    }
    const b = chunk[i] as number;
    if (this.name !== undefined) {
      if (this.name.length < NAME_BYTES_MAX) this.name.push(b);
      else this.nameTooLong = true;
    }
    if (this.escaped) {
      this.escaped = false;
    } else if (b === BACKSLASH) {
      this.escaped = true;
    } else if (b === QUOTE) {
      this.inString = false;
      if (this.name !== undefined) this.endName();
    }
    return i;
  }

  private endName(): void {
    const raw = (this.name as number[]).slice(0, -1); // without the closing quote
    this.name = undefined;
    this.expectName = false;
    this.lastName = this.nameTooLong ? "" : decodeName(raw);
  }

  private open(object: boolean): void {
    this.addStructure();
    this.depth++;
    if (this.depth > this.limits.depthMax) {
      throw badRequest(`request body nests arrays and objects deeper than ${this.limits.depthMax} levels`, { max_depth: this.limits.depthMax });
    }
    this.isObject[this.depth] = object;
    if (this.depth === 1) this.expectName = object;
    if (this.depth === 2 && !object && this.isObject[1] && this.lastName === this.limits.field) {
      this.counting = true;
      this.awaitingElement = true;
    }
  }

  private countElement(): void {
    this.awaitingElement = false;
    if (!this.counting) return;
    this.elements++;
    if (this.elements > this.limits.itemsMax) {
      const { itemsMax, field } = this.limits;
      throw badRequest(`at most ${itemsMax} ${field} per batch call; got more`, { max_items: itemsMax });
    }
  }

  private addStructure(): void {
    this.structure++;
    if (this.structure > this.limits.structureMax) {
      throw badRequest(`request body holds more JSON structure than a batch of ${this.limits.itemsMax} ${this.limits.field} needs (over ${this.limits.structureMax} arrays, objects and commas)`, {
        max_structure: this.limits.structureMax,
      });
    }
  }
}

/** A member name as JSON.parse would read it ("" when it is not a valid JSON string). */
function decodeName(raw: number[]): string {
  const bytes = Buffer.from(raw);
  if (!raw.includes(BACKSLASH)) return bytes.toString("utf8");
  try {
    return JSON.parse(`"${bytes.toString("utf8")}"`) as string;
  } catch {
    return "";
  }
}
