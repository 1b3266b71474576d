import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkHeader,
  checksumMatches,
  decodeDelivery,
  encodeDelivery,
  frame,
  HEADER_BYTES,
  SpooledDelivery,
} from './spool-record';
import { syncDirectory } from './spool-segments';

export interface ParkedDelivery {
  file: string;
  delivery: SpooledDelivery;
  bytes: number;
}

/**
 * Spooled deliveries that replay could not apply yet (an order not registered yet): one file each,
 * retried at their `retryAt`, so that they never hold up the records behind them. Each file is one
 * framed record, written to a temporary name, fsynced and renamed into place.
 */
export class ParkedDeliveries {
  private readonly entries = new Map<string, ParkedDelivery>();

  private constructor(private readonly dir: string) {}

  /** Loads what is parked; a file that does not check out is handed to `quarantine` and removed. */
  static async open(
    dir: string,
    quarantine: (file: string, bytes: Buffer, reason: string) => Promise<void>,
  ): Promise<ParkedDeliveries> {
    const parked = new ParkedDeliveries(dir);
    await mkdir(dir, { recursive: true });
    for (const file of await readdir(dir)) {
      const path = join(dir, file);
      if (file.endsWith('.tmp')) {
        await unlink(path); // its rename never happened: the record is still in its segment
        continue;
      }
      const bytes = await readFile(path);
      try {
        parked.entries.set(file, { file, delivery: readParked(bytes), bytes: bytes.length });
      } catch (error) {
        await quarantine(file, bytes, (error as Error).message);
        await unlink(path);
      }
    }
    return parked;
  }

  get count(): number {
    return this.entries.size;
  }

  get bytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.bytes;
    return total;
  }

  get oldestReceivedAt(): Date | undefined {
    let oldest: Date | undefined;
    for (const { delivery } of this.entries.values()) {
      if (!oldest || delivery.receivedAt < oldest) oldest = delivery.receivedAt;
    }
    return oldest;
  }

  /** Those whose retry time has come, earliest first. */
  due(now: Date, limit: number): ParkedDelivery[] {
    return [...this.entries.values()]
      .filter((entry) => (entry.delivery.retryAt?.getTime() ?? 0) <= now.getTime())
      .sort((a, b) => (a.delivery.retryAt?.getTime() ?? 0) - (b.delivery.retryAt?.getTime() ?? 0))
      .slice(0, limit);
  }

  async park(delivery: SpooledDelivery): Promise<void> {
    await this.write(`${delivery.receivedAt.getTime()}-${randomUUID()}.rec`, delivery);
  }

  async reschedule(entry: ParkedDelivery, delivery: SpooledDelivery): Promise<void> {
    await this.write(entry.file, delivery);
  }

  /** Once applied: a removal lost to a crash only makes it apply again, as a duplicate. */
  async remove(entry: ParkedDelivery): Promise<void> {
    await unlink(join(this.dir, entry.file));
    this.entries.delete(entry.file);
  }

  private async write(file: string, delivery: SpooledDelivery): Promise<void> {
    const bytes = frame(encodeDelivery(delivery));
    const temporary = join(this.dir, `${file}.tmp`);
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, join(this.dir, file));
    await syncDirectory(this.dir);
    this.entries.set(file, { file, delivery, bytes: bytes.length });
  }
}

function readParked(bytes: Buffer): SpooledDelivery {
  const header = bytes.subarray(0, HEADER_BYTES);
  const check = header.length === HEADER_BYTES ? checkHeader(header) : { ok: false as const, reason: 'torn' };
  if (!check.ok) throw new Error(check.reason);
  const payload = bytes.subarray(HEADER_BYTES);
  if (payload.length !== check.payloadBytes || !checksumMatches(header, payload)) throw new Error('checksum mismatch');
  return decodeDelivery(payload);
}
