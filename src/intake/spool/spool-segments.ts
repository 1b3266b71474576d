import { join } from 'node:path';
import { FileHandle, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { checkHeader, checksumMatches, HEADER_BYTES, MAGIC } from './spool-record';

/** A place in the spool: a segment file and a byte offset in it. */
export interface Position {
  segment: number;
  offset: number;
}

export interface SegmentRecord {
  payload: Buffer;
  at: Position;
  next: Position;
}

/** Bytes that are not a whole, intact record: a torn tail, a bad marker, a checksum mismatch. */
export interface CorruptStretch {
  at: Position;
  bytes: Buffer;
  reason: string;
}

const SEGMENT_BYTES = 4 * 1024 * 1024;
const SCAN_CHUNK_BYTES = 64 * 1024;
const CHECKPOINT_BYTES = 20;

type ReadResult = { ok: true; record: SegmentRecord } | { ok: false; reason: string };

interface QueuedAppend {
  bytes: Buffer;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Append-only segment files plus a checkpoint (the position of the first record not yet applied).
 * Appends are written in groups, each fsynced before any of its callers is answered. Each start
 * writes to a new segment, so a tail torn by a crash is never written behind. The checkpoint is
 * rewritten in place (20 bytes, checksummed) and fsynced after each record is consumed; a
 * checkpoint that does not check out restarts from the oldest segment, which only re-applies
 * records whose effects the dedup key already holds.
 */
export class SpoolSegments {
  private active!: { segment: number; handle: FileHandle; size: number };
  private readonly sealedSizes = new Map<number, number>();
  private checkpoint!: Position;
  private checkpointHandle!: FileHandle;
  private reader?: { segment: number; handle: FileHandle };
  private writer: Promise<unknown> = Promise.resolve();
  private queue: QueuedAppend[] = [];
  private queuedBytes = 0;
  private groupScheduled = false;

  private constructor(
    private readonly dir: string,
    private readonly quarantine: (stretch: CorruptStretch) => Promise<void>,
  ) {}

  static async open(
    dir: string,
    quarantine: (stretch: CorruptStretch) => Promise<void>,
    warn: (message: string) => void,
  ): Promise<SpoolSegments> {
    const segments = new SpoolSegments(dir, quarantine);
    await mkdir(dir, { recursive: true });
    await segments.recover(warn);
    return segments;
  }

  /** Segment bytes on disk, and those waiting to be written. */
  get bytes(): number {
    let total = this.active.size + this.queuedBytes;
    for (const size of this.sealedSizes.values()) total += size;
    return total;
  }

  /** Resolves once `bytes` (whole records) are written and fsynced. */
  append(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, resolve, reject });
      this.queuedBytes += bytes.length;
      if (this.groupScheduled) return;
      this.groupScheduled = true;
      void this.serialize(() => this.writeQueued()); // never rejects: each group answers its callers
    });
  }

  /**
   * The first record not yet consumed, or undefined when there is none. Corrupt stretches on the
   * way are handed to `quarantine` and stepped over, so they never block the records behind them.
   */
  async head(): Promise<SegmentRecord | undefined> {
    for (;;) {
      const { segment, offset } = this.checkpoint;
      const end = this.endOf(segment);
      if (end === undefined || offset >= end) {
        if (!(await this.moveToNextSegment())) return undefined;
        continue;
      }
      const read = await this.readAt(segment, offset, end);
      if (read.ok) return read.record;
      const resume = await this.findMarker(segment, offset + 1, end);
      const reason = resume === end && segment !== this.active.segment ? `torn tail (${read.reason})` : read.reason;
      await this.quarantine({ at: { segment, offset }, bytes: await this.readBytes(segment, offset, resume), reason });
      await this.commit({ segment, offset: resume });
    }
  }

  /** Moves the checkpoint past a consumed record, durably. */
  async commit(next: Position): Promise<void> {
    this.checkpoint = next;
    const bytes = Buffer.alloc(CHECKPOINT_BYTES);
    MAGIC.copy(bytes, 0);
    bytes.writeUInt32BE(next.segment, 4);
    bytes.writeBigUInt64BE(BigInt(next.offset), 8);
    bytes.writeUInt32BE(crc32(bytes.subarray(0, 16)), 16);
    await this.checkpointHandle.write(bytes, 0, CHECKPOINT_BYTES, 0);
    await this.checkpointHandle.datasync();
  }

  /** Records from the checkpoint on, counted at start; corrupt stretches are skipped, not counted. */
  async countRecords(): Promise<number> {
    let records = 0;
    for (const segment of [...this.sealedSizes.keys(), this.active.segment].sort((a, b) => a - b)) {
      if (segment < this.checkpoint.segment) continue;
      const end = this.endOf(segment)!;
      let offset = segment === this.checkpoint.segment ? this.checkpoint.offset : 0;
      while (offset < end) {
        const read = await this.readAt(segment, offset, end);
        if (read.ok) records++;
        offset = read.ok ? read.record.next.offset : await this.findMarker(segment, offset + 1, end);
      }
    }
    return records;
  }

  async close(): Promise<void> {
    await this.writer;
    await this.active.handle.close();
    await this.reader?.handle.close();
    await this.checkpointHandle.close();
  }

  private async recover(warn: (message: string) => void): Promise<void> {
    const existing = await this.listSegments();
    const { checkpoint, problem } = await this.readCheckpoint();
    if (problem) warn(`spool checkpoint ${problem}; replaying from the oldest segment (repeats apply as duplicates)`);
    this.checkpoint = checkpoint ?? { segment: existing[0] ?? 1, offset: 0 };
    for (const segment of existing) {
      // Consumed before the last stop, but not yet deleted.
      if (segment < this.checkpoint.segment) await unlink(this.segmentPath(segment));
      else this.sealedSizes.set(segment, (await stat(this.segmentPath(segment))).size);
    }
    this.active = await this.createSegment(Math.max(this.checkpoint.segment, ...existing) + 1);
    this.checkpointHandle = await openForRewrite(join(this.dir, 'checkpoint'));
    await syncDirectory(this.dir);
  }

  private async readCheckpoint(): Promise<{ checkpoint?: Position; problem?: string }> {
    let bytes: Buffer;
    try {
      const handle = await open(join(this.dir, 'checkpoint'), 'r');
      try {
        bytes = await readExact(handle, 0, CHECKPOINT_BYTES);
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      return { problem: `unreadable (${(error as Error).message})` };
    }
    if (bytes.length < CHECKPOINT_BYTES || !bytes.subarray(0, 4).equals(MAGIC)) return { problem: 'is torn' };
    if (bytes.readUInt32BE(16) !== crc32(bytes.subarray(0, 16))) return { problem: 'fails its checksum' };
    return { checkpoint: { segment: bytes.readUInt32BE(4), offset: Number(bytes.readBigUInt64BE(8)) } };
  }

  private async writeQueued(): Promise<void> {
    this.groupScheduled = false;
    const group = this.queue.splice(0);
    const bytes = Buffer.concat(group.map((append) => append.bytes));
    try {
      if (this.active.size >= SEGMENT_BYTES) await this.roll();
      await this.active.handle.write(bytes, 0, bytes.length, this.active.size);
      await this.active.handle.datasync();
      this.active.size += bytes.length;
      for (const append of group) append.resolve();
    } catch (error) {
      for (const append of group) append.reject(error);
      // After a failed write or fsync the segment's tail is unknown: never write behind it.
      await this.roll().catch(() => undefined);
    } finally {
      this.queuedBytes -= bytes.length;
    }
  }

  /** Seals the active segment and starts the next one. */
  private async roll(): Promise<void> {
    const next = await this.createSegment(this.active.segment + 1);
    const old = this.active;
    this.active = next;
    this.sealedSizes.set(old.segment, (await old.handle.stat()).size);
    await old.handle.close();
  }

  /**
   * Past the end of the checkpoint's segment: on to the next one, and the consumed one is deleted.
   * A drained active segment is sealed first, so that its bytes are freed too.
   */
  private async moveToNextSegment(): Promise<boolean> {
    const current = this.checkpoint.segment;
    if (current === this.active.segment) {
      if (this.active.size === 0 || this.checkpoint.offset < this.active.size) return false;
      await this.serialize(async () => {
        if (this.active.segment === current && this.queue.length === 0) await this.roll();
      });
      if (current === this.active.segment) return false;
    }
    const next = Math.min(this.active.segment, ...[...this.sealedSizes.keys()].filter((s) => s > current));
    await this.commit({ segment: next, offset: 0 });
    if (this.reader?.segment === current) {
      await this.reader.handle.close();
      this.reader = undefined;
    }
    if (this.sealedSizes.delete(current)) await unlink(this.segmentPath(current)).catch(() => undefined);
    return true;
  }

  private endOf(segment: number): number | undefined {
    return segment === this.active.segment ? this.active.size : this.sealedSizes.get(segment);
  }

  private async readAt(segment: number, offset: number, end: number): Promise<ReadResult> {
    if (end - offset < HEADER_BYTES) return { ok: false, reason: `${end - offset} bytes, less than a header` };
    const handle = await this.readerOf(segment);
    const header = await readExact(handle, offset, HEADER_BYTES);
    if (header.length < HEADER_BYTES) return { ok: false, reason: 'file shorter than expected' };
    const check = checkHeader(header);
    if (!check.ok) return check;
    const payloadStart = offset + HEADER_BYTES;
    if (payloadStart + check.payloadBytes > end) {
      return { ok: false, reason: `record of ${check.payloadBytes} bytes cut short at ${end - payloadStart}` };
    }
    const payload = await readExact(handle, payloadStart, check.payloadBytes);
    if (!checksumMatches(header, payload)) return { ok: false, reason: 'checksum mismatch' };
    const next = { segment, offset: payloadStart + check.payloadBytes };
    return { ok: true, record: { payload, at: { segment, offset }, next } };
  }

  /** The next record marker at or after `from`, or `end` when there is none. */
  private async findMarker(segment: number, from: number, end: number): Promise<number> {
    const handle = await this.readerOf(segment);
    for (let start = from; start < end; start += SCAN_CHUNK_BYTES) {
      // Chunks overlap by a marker's length less one byte, so a marker across two chunks is found.
      const chunk = await readExact(handle, start, Math.min(SCAN_CHUNK_BYTES + MAGIC.length - 1, end - start));
      const found = chunk.indexOf(MAGIC);
      if (found >= 0) return start + found;
    }
    return end;
  }

  private async readBytes(segment: number, from: number, to: number): Promise<Buffer> {
    return readExact(await this.readerOf(segment), from, to - from);
  }

  private async readerOf(segment: number): Promise<FileHandle> {
    if (this.reader?.segment === segment) return this.reader.handle;
    await this.reader?.handle.close();
    this.reader = { segment, handle: await open(this.segmentPath(segment), 'r') };
    return this.reader.handle;
  }

  private async createSegment(segment: number): Promise<{ segment: number; handle: FileHandle; size: number }> {
    const handle = await open(this.segmentPath(segment), 'wx');
    await syncDirectory(this.dir); // the new file's name must survive a crash as its records do
    return { segment, handle, size: 0 };
  }

  private async listSegments(): Promise<number[]> {
    const names = await readdir(this.dir);
    return names
      .map((name) => /^(\d{12})\.seg$/.exec(name))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => Number(match[1]))
      .sort((a, b) => a - b);
  }

  private segmentPath(segment: number): string {
    return join(this.dir, `${String(segment).padStart(12, '0')}.seg`);
  }

  private serialize<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.writer.then(operation);
    this.writer = run.catch(() => undefined);
    return run;
  }
}

export async function readExact(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function openForRewrite(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return open(path, 'w+');
  }
}
