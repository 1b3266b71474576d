import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Counter, Gauge } from 'prom-client';
import { spoolConfig } from '../../platform/config/spool.config';
import { ConfigurationError } from '../../platform/config/env-validation';
import { ParkedDeliveries, ParkedDelivery } from './parked-deliveries';
import { SPOOL_BYTES, SPOOL_DELIVERIES, SPOOL_OLDEST_AGE, SPOOL_QUARANTINED } from './spool-metrics';
import { decodeDelivery, encodeDelivery, frame, SpooledDelivery } from './spool-record';
import { SpoolInUse, SpoolLock } from './spool-lock';
import { CorruptStretch, Position, SpoolSegments } from './spool-segments';

export class SpoolFull extends Error {}

/** The first spooled delivery not yet applied, and where the spool goes on once it is. */
export interface SpoolHead {
  delivery: SpooledDelivery;
  next: Position;
}

export interface SpoolStats {
  pending: number;
  parked: number;
  oldestAgeSeconds: number;
  bytes: number;
  maxBytes: number;
  quarantined: number;
}

/**
 * The durable spool (SPOOL_DIR): verified notifications the database could not take, appended and
 * fsynced before their ack, replayed once the database answers (SpoolReplayer). Layout:
 * `segments/` (the records in arrival order, and the checkpoint), `parked/` (replayed but not
 * applicable yet), `quarantine/` (corrupt or torn bytes, kept for a person to look at).
 */
@Injectable()
export class DeliverySpool implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(DeliverySpool.name);
  private lock?: SpoolLock;
  private segments?: SpoolSegments;
  private parkedDeliveries?: ParkedDeliveries;
  private pending = 0;
  private oldestPendingAt?: Date;
  private quarantined = 0;
  private full = false;
  private appending = 0;

  constructor(
    @Inject(spoolConfig.KEY) private readonly config: ConfigType<typeof spoolConfig>,
    @InjectMetric(SPOOL_DELIVERIES) private readonly deliveriesGauge: Gauge<string>,
    @InjectMetric(SPOOL_OLDEST_AGE) private readonly ageGauge: Gauge<string>,
    @InjectMetric(SPOOL_BYTES) private readonly bytesGauge: Gauge<string>,
    @InjectMetric(SPOOL_QUARANTINED) private readonly quarantinedTotal: Counter<string>,
  ) {}

  get enabled(): boolean {
    return this.config.dir !== undefined;
  }

  /** Open, and the last append fitted: a delivery the database cannot take now is still acked. */
  get hasRoom(): boolean {
    return this.segments !== undefined && !this.full && this.stats().bytes < this.config.maxBytes;
  }

  async onModuleInit(): Promise<void> {
    const dir = this.config.dir;
    if (dir === undefined) return;
    try {
      await mkdir(join(dir, 'quarantine'), { recursive: true });
      // Before anything is read or deleted: a second instance on the directory stops here.
      this.lock = await SpoolLock.acquire(dir);
      this.segments = await SpoolSegments.open(
        join(dir, 'segments'),
        (stretch) => this.quarantineStretch(stretch),
        (message) => this.logger.warn(message),
      );
      this.parkedDeliveries = await ParkedDeliveries.open(join(dir, 'parked'), (file, bytes, reason) =>
        this.quarantine(`parked-${file}`, bytes, `parked file ${file}: ${reason}`),
      );
      this.pending = await this.segments.countRecords();
    } catch (error) {
      if (error instanceof SpoolInUse) throw error;
      throw new ConfigurationError(`SPOOL_DIR ${dir} cannot be used as the spool: ${(error as Error).message}`);
    }
    this.logger.log(
      `spool at ${dir}: ${this.pending} deliveries waiting, ${this.parked.count} parked, cap ${this.config.maxBytes} bytes`,
    );
    this.publishMetrics();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.segments?.close();
    await this.lock?.release();
  }

  /** Resolves once the delivery is on disk (fsynced); SpoolFull when it would pass SPOOL_MAX_BYTES. */
  async append(delivery: SpooledDelivery): Promise<void> {
    const bytes = frame(encodeDelivery(delivery));
    const segments = this.segments!;
    if (segments.bytes + this.parked.bytes + bytes.length > this.config.maxBytes) {
      if (!this.full)
        this.logger.warn(`spool full (${this.config.maxBytes} bytes): answering failures until it drains`);
      this.full = true;
      throw new SpoolFull('the spool is full');
    }
    this.full = false;
    this.appending++;
    try {
      await segments.append(bytes);
    } finally {
      this.appending--;
    }
    if (this.pending++ === 0) this.oldestPendingAt = delivery.receivedAt;
  }

  /** The oldest pending delivery; records that do not decode are quarantined on the way. */
  async head(): Promise<SpoolHead | undefined> {
    const segments = this.segments!;
    for (;;) {
      const record = await segments.head();
      if (!record) {
        // Whatever the count says (a record found corrupt was counted), nothing is left but what is being written.
        if (this.appending === 0) this.pending = 0;
        return undefined;
      }
      try {
        const delivery = decodeDelivery(record.payload);
        this.oldestPendingAt = delivery.receivedAt;
        return { delivery, next: record.next };
      } catch (error) {
        await this.quarantineStretch({ at: record.at, bytes: record.payload, reason: (error as Error).message });
        await segments.commit(record.next);
      }
    }
  }

  /** The head has been applied (its transaction committed and its delivery is on record). */
  async consumed(head: SpoolHead): Promise<void> {
    await this.segments!.commit(head.next);
    this.pending = Math.max(0, this.pending - 1);
  }

  /** The head could not be applied yet: it waits in parked/ until `retryAt`, out of the others' way. */
  async parkHead(head: SpoolHead, retryAt: Date): Promise<void> {
    await this.parked.park({ ...head.delivery, attempts: head.delivery.attempts + 1, retryAt });
    await this.consumed(head);
  }

  dueParked(now: Date, limit: number): ParkedDelivery[] {
    return this.parked.due(now, limit);
  }

  async reschedule(entry: ParkedDelivery, retryAt: Date): Promise<void> {
    await this.parked.reschedule(entry, { ...entry.delivery, attempts: entry.delivery.attempts + 1, retryAt });
  }

  async unpark(entry: ParkedDelivery): Promise<void> {
    await this.parked.remove(entry);
  }

  stats(now = Date.now()): SpoolStats {
    const oldest = [this.pending > 0 ? this.oldestPendingAt : undefined, this.parkedDeliveries?.oldestReceivedAt]
      .filter((date): date is Date => date !== undefined)
      .reduce((min, date) => Math.min(min, date.getTime()), now);
    return {
      pending: this.pending,
      parked: this.parkedDeliveries?.count ?? 0,
      oldestAgeSeconds: Math.max(0, Math.round((now - oldest) / 1000)),
      bytes: (this.segments?.bytes ?? 0) + (this.parkedDeliveries?.bytes ?? 0),
      maxBytes: this.config.maxBytes,
      quarantined: this.quarantined,
    };
  }

  publishMetrics(): void {
    const stats = this.stats();
    this.deliveriesGauge.set({ state: 'pending' }, stats.pending);
    this.deliveriesGauge.set({ state: 'parked' }, stats.parked);
    this.ageGauge.set(stats.oldestAgeSeconds);
    this.bytesGauge.set(stats.bytes);
  }

  private get parked(): ParkedDeliveries {
    return this.parkedDeliveries!;
  }

  private quarantineStretch({ at, bytes, reason }: CorruptStretch): Promise<void> {
    return this.quarantine(`${at.segment}-${at.offset}.bad`, bytes, `segment ${at.segment} at ${at.offset}: ${reason}`);
  }

  /** Keeps the bytes for a person to look at; a spool that cannot even do that still goes on. */
  private async quarantine(file: string, bytes: Buffer, what: string): Promise<void> {
    this.quarantined++;
    this.quarantinedTotal.inc();
    const path = join(this.config.dir!, 'quarantine', file);
    try {
      await writeFile(path, bytes);
      this.logger.error(`spool: ${bytes.length} bytes quarantined to ${path} (${what}); the records behind go on`);
    } catch (error) {
      this.logger.error(
        `spool: ${bytes.length} bytes skipped (${what}); keeping them failed: ${(error as Error).message}`,
      );
    }
  }
}
