// The key and value bytes of one shard's records, outside the JS heap: a record is its key in
// UTF-8 followed by its value (a byte string, one byte per char). A slot knows its record's
// location and the two lengths. Two JS strings per record cost a 16-byte header each, alignment
// and an 8-byte array entry each, and are objects for the GC to mark and move; here a record
// costs its bytes and 12 bytes of location and lengths.
//
// Small records are packed into pages of PAGE_BYTES, all of one size: the store grows by adding
// pages (nothing is copied, nothing freed). A record larger than LARGE_RECORD_BYTES has a buffer
// of its own. Writes append to the last page; a replaced or removed record leaves garbage behind,
// and once a quarter of the paged bytes (and at least a page) is garbage, the live records slide
// down in place, in location order, and the pages emptied at the end are kept for the next
// writes (up to a third of the pages in use, the rest dropped). Compacting into fresh pages
// instead left the old ones for the garbage collector: 32 shards compacting between two full
// collections held tens of MB of dead pages, and glibc kept the arena they grew (the soak saw the
// memory outside V8's heap step up by 19-27 MiB when the write rate rose). Reads copy out (new
// strings), so no one outside holds a reference into a page and records may move at the next write.

const PAGE_BYTES = 65_536;
/** Pages a shard holds at most: locations are page x PAGE_BYTES + offset in a uint32. */
const MAX_PAGES = 65_536;
/** Records above this size get a buffer of their own (a page wastes less than this at its end). */
const LARGE_RECORD_BYTES = 4096;
/** Compaction runs once garbage is at least 1 / GARBAGE_DIVISOR of the paged record bytes. */
const GARBAGE_DIVISOR = 4;

/** What the record bytes of a shard hold (for tests and sizing). */
export interface RecordBytesStats {
  readonly pages: number;
  /** Bytes of live records in pages. */
  readonly liveBytes: number;
  /** Bytes of replaced or removed records in pages, not reclaimed yet. */
  readonly garbageBytes: number;
  /** Records with a buffer of their own, and their bytes. */
  readonly largeRecords: number;
  readonly largeBytes: number;
  /** Empty pages kept for the next writes. */
  readonly sparePages: number;
  /** Pages allocated since the start (a compaction reuses pages; it allocates none). */
  readonly pagesAllocated: number;
  /** Bytes of the pages held, in use and spare (what the pages cost in memory). */
  readonly pageBytes: number;
}

export class RecordBytes {
  private pages: Buffer[] = [];
  /** Empty pages, reused before a page is allocated. */
  private spare: Buffer[] = [];
  private pagesAllocated = 0;
  /** Bytes used in the last page; PAGE_BYTES when there is no page yet. */
  private tail = PAGE_BYTES;
  private live = 0;
  private garbage = 0;
  private readonly large = new Map<number, Buffer>();
  /** Bytes of the records in `large` (kept as they change, so stats() never walks them). */
  private largeBytes = 0;
  private locations: Uint32Array;
  private keyLengths: Uint32Array;
  private valueLengths: Uint32Array;

  constructor(slots: number) {
    this.locations = new Uint32Array(slots);
    this.keyLengths = new Uint32Array(slots);
    this.valueLengths = new Uint32Array(slots);
  }

  stats(): RecordBytesStats {
    return { pages: this.pages.length, liveBytes: this.live, garbageBytes: this.garbage, largeRecords: this.large.size, largeBytes: this.largeBytes, sparePages: this.spare.length, pagesAllocated: this.pagesAllocated, pageBytes: (this.pages.length + this.spare.length) * PAGE_BYTES };
  }

  /** Grows the per-slot tables to `slots` entries. */
  resize(slots: number): void {
    this.locations = grown(this.locations, slots);
    this.keyLengths = grown(this.keyLengths, slots);
    this.valueLengths = grown(this.valueLengths, slots);
  }

  /** Stores a new record in an empty slot. */
  add(slot: number, key: string, value: string): void {
    const keyBytes = key.length === 0 ? 0 : Buffer.byteLength(key, "utf8");
    this.claim(slot, keyBytes + value.length);
    const buf = this.claimed as Buffer;
    this.claimed = undefined;
    const at = this.claimedAt;
    buf.write(key, at, keyBytes, "utf8");
    buf.write(value, at + keyBytes, value.length, "latin1");
    this.locations[slot] = this.claimedLocation;
    this.keyLengths[slot] = keyBytes;
    this.valueLengths[slot] = value.length;
  }

  /** Replaces the value of a slot's record (its key stays). */
  setValue(slot: number, value: string): void {
    const keyBytes = this.keyLengths[slot] as number;
    const oldSize = keyBytes + (this.valueLengths[slot] as number);
    const size = keyBytes + value.length;
    if (oldSize <= LARGE_RECORD_BYTES && size <= oldSize) {
      // Shorter or equal in a page: in place.
      const loc = this.locations[slot] as number;
      (this.pages[loc >>> 16] as Buffer).write(value, (loc & 0xffff) + keyBytes, value.length, "latin1");
      this.live -= oldSize - size;
      this.garbage += oldSize - size;
      this.valueLengths[slot] = value.length;
      return;
    }
    // The old record stays live while room is made (a compaction moves it), then is copied from.
    const oldLarge = this.dropLarge(slot);
    this.claim(slot, size);
    const buf = this.claimed as Buffer;
    this.claimed = undefined;
    const at = this.claimedAt;
    if (oldLarge !== undefined) {
      oldLarge.copy(buf, at, 0, keyBytes);
    } else {
      const loc = this.locations[slot] as number;
      const from = loc & 0xffff;
      (this.pages[loc >>> 16] as Buffer).copy(buf, at, from, from + keyBytes);
      this.live -= oldSize;
      this.garbage += oldSize;
    }
    buf.write(value, at + keyBytes, value.length, "latin1");
    this.locations[slot] = this.claimedLocation;
    this.valueLengths[slot] = value.length;
  }

  /** Drops the slot's record. */
  remove(slot: number): void {
    const size = (this.keyLengths[slot] as number) + (this.valueLengths[slot] as number);
    if (size > LARGE_RECORD_BYTES) {
      this.dropLarge(slot);
    } else {
      this.live -= size;
      this.garbage += size;
    }
    this.locations[slot] = 0;
    this.keyLengths[slot] = 0;
    this.valueLengths[slot] = 0;
  }

  /** Drops every record. */
  clear(): void {
    this.pages = [];
    this.spare = [];
    this.tail = PAGE_BYTES;
    this.live = this.garbage = this.largeBytes = 0;
    this.large.clear();
    this.locations.fill(0);
    this.keyLengths.fill(0);
    this.valueLengths.fill(0);
  }

  /** True when the slot's key is `key`. ASCII keys compare byte by byte without allocating. */
  keyEquals(slot: number, key: string): boolean {
    const n = this.keyLengths[slot] as number;
    const size = n + (this.valueLengths[slot] as number);
    const loc = this.locations[slot] as number;
    const buf = size > LARGE_RECORD_BYTES ? (this.large.get(slot) as Buffer) : (this.pages[loc >>> 16] as Buffer);
    const at = size > LARGE_RECORD_BYTES ? 0 : loc & 0xffff;
    if (n === key.length) {
      let i = 0;
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        if (c >= 0x80) break;
        if (c !== buf[at + i]) return false;
      }
      if (i === n) return true;
    }
    return n >= key.length && n <= 3 * key.length && buf.toString("utf8", at, at + n) === key;
  }

  keyAt(slot: number): string {
    const n = this.keyLengths[slot] as number;
    const at = this.offsetOf(slot);
    return this.bufferOf(slot, n + (this.valueLengths[slot] as number)).toString("utf8", at, at + n);
  }

  valueAt(slot: number): string {
    const k = this.keyLengths[slot] as number;
    const v = this.valueLengths[slot] as number;
    const at = this.offsetOf(slot) + k;
    return this.bufferOf(slot, k + v).toString("latin1", at, at + v);
  }

  /** The first `length` bytes of the slot's value (all of it when shorter). */
  valueHead(slot: number, length: number): string {
    const k = this.keyLengths[slot] as number;
    const v = this.valueLengths[slot] as number;
    const at = this.offsetOf(slot) + k;
    return this.bufferOf(slot, k + v).toString("latin1", at, at + Math.min(length, v));
  }

  valueLength(slot: number): number {
    return this.valueLengths[slot] as number;
  }

  /** Bytes of the slot's key in UTF-8. */
  keyLength(slot: number): number {
    return this.keyLengths[slot] as number;
  }

  /** Forgets `slot`'s large record, if it has one, and returns it. */
  private dropLarge(slot: number): Buffer | undefined {
    const b = this.large.get(slot);
    if (b === undefined) return undefined;
    this.largeBytes -= b.length;
    this.large.delete(slot);
    return b;
  }

  /** Where the last claim put the new record: its buffer, offset, and location for the slot table. */
  private claimed: Buffer | undefined;
  private claimedAt = 0;
  private claimedLocation = 0;

  /**
   * Makes room for a new record of `size` bytes for `slot` and leaves where in `claimed`,
   * `claimedAt` and `claimedLocation`; the caller writes it and stores the location once it
   * has copied what it needs from the slot's old record (a compaction here moves that too).
   */
  private claim(slot: number, size: number): void {
    if (size > LARGE_RECORD_BYTES) {
      this.claimed = Buffer.allocUnsafeSlow(size);
      this.large.set(slot, this.claimed);
      this.largeBytes += size;
      this.claimedAt = this.claimedLocation = 0;
      return;
    }
    if (this.tail + size > PAGE_BYTES) {
      if (this.garbage >= PAGE_BYTES && this.garbage * GARBAGE_DIVISOR >= this.live + this.garbage) this.compact();
      if (this.tail + size > PAGE_BYTES) this.addPage();
    }
    this.claimed = this.pages[this.pages.length - 1] as Buffer;
    this.claimedAt = this.tail;
    this.claimedLocation = (this.pages.length - 1) * PAGE_BYTES + this.tail;
    this.tail += size;
    this.live += size;
  }

  private addPage(): void {
    if (this.pages.length >= MAX_PAGES) throw new RangeError(`a store shard holds at most ${MAX_PAGES * PAGE_BYTES} bytes of small records`);
    let page = this.spare.pop();
    if (page === undefined) {
      page = Buffer.allocUnsafeSlow(PAGE_BYTES);
      this.pagesAllocated++;
    }
    this.pages.push(page);
    this.tail = 0;
  }

  private bufferOf(slot: number, size: number): Buffer {
    return size > LARGE_RECORD_BYTES ? (this.large.get(slot) as Buffer) : (this.pages[(this.locations[slot] as number) >>> 16] as Buffer);
  }

  private offsetOf(slot: number): number {
    const size = (this.keyLengths[slot] as number) + (this.valueLengths[slot] as number);
    return size > LARGE_RECORD_BYTES ? 0 : (this.locations[slot] as number) & 0xffff;
  }

  /**
   * Slides the live paged records down, in location order, so they fill the first pages; the
   * pages left empty at the end become spares (up to a third of the pages in use plus one).
   * A record never moves up (its new location is at most its old one), so each copy reads bytes
   * no earlier copy has overwritten; Buffer.copy handles the overlap within a page.
   */
  private compact(): void {
    const { locations, keyLengths, valueLengths } = this;
    let n = 0;
    for (let slot = 0; slot < locations.length; slot++) {
      const size = (keyLengths[slot] as number) + (valueLengths[slot] as number);
      if (size !== 0 && size <= LARGE_RECORD_BYTES) n++;
    }
    // (location, slot) pairs as unsigned 64-bit numbers, location in the high half: sorted natively.
    const order = new BigUint64Array(n);
    const halves = new Uint32Array(order.buffer);
    let i = 0;
    for (let slot = 0; slot < locations.length; slot++) {
      const size = (keyLengths[slot] as number) + (valueLengths[slot] as number);
      if (size === 0 || size > LARGE_RECORD_BYTES) continue;
      halves[2 * i] = slot;
      halves[2 * i + 1] = locations[slot] as number;
      i++;
    }
    order.sort();
    const pages = this.pages;
    let page = -1;
    let tail = PAGE_BYTES;
    for (let j = 0; j < n; j++) {
      const slot = halves[2 * j] as number;
      const loc = halves[2 * j + 1] as number;
      const size = (keyLengths[slot] as number) + (valueLengths[slot] as number);
      if (tail + size > PAGE_BYTES) {
        page++;
        tail = 0;
      }
      const from = loc & 0xffff;
      if (page !== loc >>> 16 || tail !== from) (pages[loc >>> 16] as Buffer).copy(pages[page] as Buffer, tail, from, from + size);
      locations[slot] = page * PAGE_BYTES + tail;
      tail += size;
    }
    const emptied = pages.splice(page + 1);
    // What the writes until the next compaction fill (garbage reaches a quarter of the paged bytes
    // when a third of the live bytes has been written again), so the pages stay at their high-water
    // mark instead of being dropped and allocated again.
    const keep = Math.ceil(pages.length / (GARBAGE_DIVISOR - 1)) + 1;
    for (const p of emptied) if (this.spare.length < keep) this.spare.push(p);
    this.tail = tail;
    this.garbage = 0;
  }
}

function grown(a: Uint32Array, slots: number): Uint32Array {
  if (slots <= a.length) return a;
  const b = new Uint32Array(slots);
  b.set(a);
  return b;
}
