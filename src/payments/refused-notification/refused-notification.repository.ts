import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DataSource, EntityManager } from 'typeorm';
import { WriteResult } from '../../platform/database/sql';
import { capKindOf, RefusalReason, RefusedStatus } from './refused-notification.entity';

/** A refusal to keep: the bytes as received and what re-verifying them needs. */
export interface Refusal {
  channel: string;
  notifyPath: string;
  reason: RefusalReason;
  body: Buffer;
  bodySha256: Buffer;
  headers: Record<string, string>;
  receivedAt: Date;
  /** What a verified, decrypted notification for an unknown order named (OrderNotFound); null otherwise. */
  orderNo: string | null;
  transactionId: string | null;
}

/** KEPT: a new row; REPEAT: the same bytes again, counted on their row; DROPPED: over the hour's cap, counted on the hour. */
export type KeepResult = 'KEPT' | 'REPEAT' | 'DROPPED';

const ER_LOCK_DEADLOCK = 1213;

/**
 * The SQL of refused notifications. The guarantees are the database's, whichever replica writes:
 * one row per (channel, bytes) by the unique index, and at most `cap` new rows per channel, UTC
 * hour and kind (CapKind) by a conditional UPDATE of the hour's row, which two replicas cannot
 * both pass at the cap.
 */
@Injectable()
export class RefusedNotificationRepository {
  constructor(
    private readonly db: DataSource,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /** A channel's refused notifications first seen since `since`, the newest first, at most `limit`: bytes, headers, when. */
  async recentRefused(
    channel: string,
    since: Date,
    limit: number,
  ): Promise<Array<{ body: Buffer; headers: Record<string, string>; receivedAt: Date }>> {
    const rows: Array<{ raw_body: Buffer; headers: unknown; first_seen_at: Date }> = await this.db.query(
      `SELECT raw_body, headers, first_seen_at FROM refused_notification
       WHERE channel = ? AND first_seen_at >= ? ORDER BY first_seen_at DESC LIMIT ?`,
      [channel, since, limit],
    );
    return rows.map((r) => ({
      body: r.raw_body,
      headers: (typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers) as Record<string, string>,
      receivedAt: r.first_seen_at,
    }));
  }

  /** In transactions of its own, never the delivery's (which has rolled back). */
  async keep(refusal: Refusal, cap: number): Promise<KeepResult> {
    if (await this.countRepeat(this.db.manager, refusal)) return 'REPEAT';
    try {
      return await this.db.transaction((tx) => this.claimAndInsert(tx, refusal, cap));
    } catch (error) {
      // Galera reports a conflicting claim of the same hour on another node as a deadlock: once more.
      if (driverErrno(error) !== ER_LOCK_DEADLOCK) throw error;
      return this.db.transaction((tx) => this.claimAndInsert(tx, refusal, cap));
    }
  }

  private async claimAndInsert(tx: EntityManager, refusal: Refusal, cap: number): Promise<KeepResult> {
    const bucket = [refusal.channel, utcHour(refusal.receivedAt), capKindOf(refusal.reason)];
    await tx.query(
      `INSERT INTO refused_notification_hour (channel, hour, kind, kept, dropped) VALUES (?, ?, ?, 0, 0)
       ON DUPLICATE KEY UPDATE kept = kept`,
      bucket,
    );
    const claim: WriteResult = await tx.query(
      'UPDATE refused_notification_hour SET kept = kept + 1 WHERE channel = ? AND hour = ? AND kind = ? AND kept < ?',
      [...bucket, cap],
    );
    if (claim.affectedRows !== 1) {
      // Kept by another delivery meanwhile? Then it is a repeat, not a drop.
      if (await this.countRepeat(tx, refusal)) return 'REPEAT';
      await tx.query(
        'UPDATE refused_notification_hour SET dropped = dropped + 1 WHERE channel = ? AND hour = ? AND kind = ?',
        bucket,
      );
      return 'DROPPED';
    }
    const inserted: WriteResult = await tx.query(
      `INSERT INTO refused_notification
         (channel, notify_path, body_sha256, reason, raw_body, headers, order_no, transaction_id,
          first_seen_at, last_seen_at, times_seen, status, reverify_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 0)
       ON DUPLICATE KEY UPDATE times_seen = times_seen + 1, last_seen_at = GREATEST(last_seen_at, VALUES(last_seen_at))`,
      [
        refusal.channel,
        refusal.notifyPath,
        refusal.bodySha256,
        refusal.reason,
        refusal.body,
        JSON.stringify(refusal.headers),
        refusal.orderNo,
        refusal.transactionId,
        refusal.receivedAt,
        refusal.receivedAt,
        RefusedStatus.Refused,
      ],
    );
    if (inserted.affectedRows === 1) return 'KEPT';
    // Another delivery of the same bytes stored them first: this one gives its place back.
    await tx.query(
      'UPDATE refused_notification_hour SET kept = kept - 1 WHERE channel = ? AND hour = ? AND kind = ?',
      bucket,
    );
    return 'REPEAT';
  }

  private async countRepeat(db: EntityManager, refusal: Refusal): Promise<boolean> {
    const seen: WriteResult = await db.query(
      `UPDATE refused_notification SET times_seen = times_seen + 1, last_seen_at = GREATEST(last_seen_at, ?)
       WHERE channel = ? AND body_sha256 = ?`,
      [refusal.receivedAt, refusal.channel, refusal.bodySha256],
    );
    return seen.affectedRows === 1;
  }

  /**
   * What a re-verification found, on the row: ACCEPTED (settled) or still REFUSED with its reason.
   * An ACCEPTED row stays ACCEPTED: a later re-verification that finds it a repeat changes nothing.
   * In the caller's transaction, with its audit row.
   */
  async recordReverification(
    id: string,
    outcome: { accepted: boolean; reason: string | null; operatorId: string; at: Date },
  ): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refused_notification
       SET status = IF(status = ? OR ?, ?, ?), reverify_count = reverify_count + 1,
           reverified_at = ?, reverified_by = ?, reverify_reason = ?
       WHERE id = ?`,
      [
        RefusedStatus.Accepted,
        outcome.accepted,
        RefusedStatus.Accepted,
        RefusedStatus.Refused,
        outcome.at,
        outcome.operatorId,
        outcome.accepted ? null : outcome.reason?.slice(0, 32),
        id,
      ],
    );
  }

  /**
   * Deletes at most `limit` refused notifications first refused before `before`, however often they
   * were refused since; a replica that deleted them first leaves nothing to count.
   */
  async pruneFirstSeenBefore(before: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.txHost.tx.query(
      'SELECT id FROM refused_notification WHERE first_seen_at < ? ORDER BY first_seen_at LIMIT ?',
      [before, limit],
    );
    if (rows.length === 0) return 0;
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification WHERE id IN (?) AND first_seen_at < ?',
      [rows.map((r) => String(r.id)), before],
    );
    return result.affectedRows;
  }

  /** Deletes at most `limit` of the cap's hourly counts for hours before `before`. */
  async pruneHoursBefore(before: Date, limit: number): Promise<number> {
    const result: WriteResult = await this.txHost.tx.query(
      'DELETE FROM refused_notification_hour WHERE hour < ? ORDER BY hour LIMIT ?',
      [before, limit],
    );
    return result.affectedRows;
  }
}

/** The UTC hour `at` falls in: the cap's bucket. */
export function utcHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 3600_000) * 3600_000);
}

function driverErrno(error: unknown): number | undefined {
  return (error as { driverError?: { errno?: number } })?.driverError?.errno;
}
