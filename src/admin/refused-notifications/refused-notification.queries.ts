import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { Between } from 'typeorm';
import { PaymentChannels } from '../../channels/payment-channels';
import { DomainError } from '../../domain/domain-error';
import { refusedNotificationsConfig } from '../../payments/refused-notification/refused-notifications.config';
import { ReportingDatabase } from '../../platform/database/reporting-database';
import { AdminRole } from '../../operators/admin.config';
import {
  RefusedNotification,
  RefusedNotificationHour,
} from '../../payments/refused-notification/refused-notification.entity';
import {
  RefusedHoursQueryDto,
  RefusedHoursView,
  RefusedNotificationPageView,
  RefusedNotificationQueryDto,
  RefusedNotificationSummary,
  RefusedNotificationView,
  toHourView,
  toSummaryView,
} from './refused-notification.dto';

const DEFAULT_PAGE = 50;
const ID = /^[1-9]\d{0,18}$/;
const DAY_MS = 24 * 3600_000;
/** Rows of the hourly counts read at most (hours × channels). */
const MAX_HOURS = 2000;

/** Every column but the bytes and the headers, and the bytes' length. */
const SUMMARY_COLUMNS = `id, channel, notify_path, body_sha256, reason, order_no, transaction_id, LENGTH(raw_body) AS body_bytes, times_seen,
  first_seen_at, last_seen_at, status, reverify_count, reverified_at, reverified_by, reverify_reason`;

/** The read side of refused notifications, on the reporting pool. */
@Injectable()
export class RefusedNotificationQueries {
  constructor(
    private readonly reporting: ReportingDatabase,
    private readonly channels: PaymentChannels,
    @Inject(refusedNotificationsConfig.KEY) private readonly config: ConfigType<typeof refusedNotificationsConfig>,
  ) {}

  async list(query: RefusedNotificationQueryDto): Promise<RefusedNotificationPageView> {
    const limit = query.limit ?? DEFAULT_PAGE;
    const where: string[] = [];
    const params: unknown[] = [];
    const filter = (sql: string, value: unknown) => {
      where.push(sql);
      params.push(value);
    };
    const { from, to } = timeRange(query.from, query.to);
    if (query.channel) filter('channel = ?', query.channel);
    if (query.reason) filter('reason = ?', query.reason);
    if (query.status) filter('status = ?', query.status);
    if (query.orderNo) filter('order_no = ?', query.orderNo);
    if (query.transactionId) filter('transaction_id = ?', query.transactionId);
    if (from) filter('first_seen_at >= ?', from);
    if (to) filter('first_seen_at < ?', to);
    if (query.cursor) filter('id < ?', query.cursor);
    const db = await this.reporting.dataSource();
    const rows: SummaryRow[] = await db.query(
      `SELECT ${SUMMARY_COLUMNS} FROM refused_notification
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      [...params, limit + 1],
    );
    const items = rows.slice(0, limit).map((r) => toSummaryView(fromRow(r)));
    return { items, nextCursor: rows.length > limit ? items[limit - 1].id : null };
  }

  /** Admins read the exact bytes; viewers read them with the payer's identifiers masked by the channel. */
  async one(id: string, role: AdminRole): Promise<RefusedNotificationView> {
    const db = await this.reporting.dataSource();
    const row = await db.getRepository(RefusedNotification).findOneBy({ id: knownId(id) });
    if (!row) throw new DomainError('NotFound', `refused notification ${id} not found`);
    const body = role === AdminRole.Admin ? row.rawBody : this.masked(row);
    return {
      ...toSummaryView({ ...row, bodyBytes: row.rawBody.length }),
      headers: row.headers,
      rawBody: body?.toString('utf8') ?? null,
      rawBodyBase64: body?.toString('base64') ?? null,
      masked: role !== AdminRole.Admin,
    };
  }

  async hours(query: RefusedHoursQueryDto): Promise<RefusedHoursView> {
    const range = timeRange(query.from, query.to);
    const to = range.to ?? new Date();
    const from = range.from ?? new Date(to.getTime() - DAY_MS);
    const db = await this.reporting.dataSource();
    const rows = await db.getRepository(RefusedNotificationHour).find({
      where: { hour: Between(new Date(Math.floor(from.getTime() / 3600_000) * 3600_000), to) },
      order: { hour: 'ASC', channel: 'ASC', kind: 'ASC' },
      take: MAX_HOURS,
    });
    return { rows: rows.filter((r) => r.hour < to).map(toHourView), perHour: this.config.perHour };
  }

  /** The bytes the way a viewer may read them, or null when the channel cannot read them (they were refused, after all). */
  private masked(row: RefusedNotification): Buffer | null {
    try {
      return this.channels.get(row.channel)?.maskPayer(row.rawBody) ?? null;
    } catch {
      return null;
    }
  }
}

interface SummaryRow {
  id: string | number;
  channel: string;
  notify_path: string;
  body_sha256: Buffer;
  reason: string;
  order_no: string | null;
  transaction_id: string | null;
  body_bytes: string | number;
  times_seen: number;
  first_seen_at: Date;
  last_seen_at: Date;
  status: string;
  reverify_count: number;
  reverified_at: Date | null;
  reverified_by: string | null;
  reverify_reason: string | null;
}

function fromRow(r: SummaryRow): RefusedNotificationSummary {
  return {
    id: String(r.id),
    channel: r.channel,
    notifyPath: r.notify_path,
    bodySha256: r.body_sha256,
    reason: r.reason as RefusedNotificationSummary['reason'],
    orderNo: r.order_no,
    transactionId: r.transaction_id,
    bodyBytes: Number(r.body_bytes),
    timesSeen: Number(r.times_seen),
    firstSeenAt: new Date(r.first_seen_at),
    lastSeenAt: new Date(r.last_seen_at),
    status: r.status as RefusedNotificationSummary['status'],
    reverifyCount: Number(r.reverify_count),
    reverifiedAt: r.reverified_at === null ? null : new Date(r.reverified_at),
    reverifiedBy: r.reverified_by,
    reverifyReason: r.reverify_reason,
  };
}

/** Ids are positive integers: anything else is a malformed request, answered without a query. */
export function knownId(id: string): string {
  if (!ID.test(id)) throw new DomainError('MalformedRequest', 'id must be a positive integer');
  return id;
}

function timeRange(fromText?: string, toText?: string): { from?: Date; to?: Date } {
  const from = fromText === undefined ? undefined : new Date(fromText);
  const to = toText === undefined ? undefined : new Date(toText);
  if (from && to && from >= to) throw new DomainError('MalformedRequest', 'from must be before to');
  return { from, to };
}
