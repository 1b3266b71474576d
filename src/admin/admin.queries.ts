import { ChannelPayment } from '../order/channel-payment.entity';
import { toPaymentView } from '../order/dto/payment-order.view';
import { Injectable } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { EntityTarget, FindOptionsOrder, FindOptionsWhere, LessThan, Between, MoreThanOrEqual } from 'typeorm';
import { PaymentAnomaly } from '../payments/anomaly/anomaly.entity';
import { ReportingDatabase } from '../platform/database/reporting-database';
import { PaymentChannels } from '../channels/payment-channels';
import { AdminRole } from '../operators/admin.config';
import { DomainError } from '../domain/domain-error';
import { CallbackDelivery } from '../payments/idempotency/callback-delivery.entity';
import { PaymentCallback } from '../payments/idempotency/payment-callback.entity';
import { OrderStatusChange } from '../order/order-status-change.entity';
import { PaymentOrder } from '../order/payment-order.entity';
import { Refund } from '../refund/refund.entity';
import { RefundAnomaly } from '../refund/refund-anomaly.entity';
import {
  AnomalyPageView,
  DeliveryView,
  RefundPageView,
  OrderDetailView,
  toAnomalyView,
  toDeliverySummary,
  toDeliveryView,
  toOrderDetailOrder,
  toRefundView,
  toRefundAnomalyView,
  toChannelCallView,
  toStatusChangeView,
  OrderPageView,
  toOrderListItem,
  DecryptedContentView,
} from './dto/admin-views';
import {
  AnomalyQueryDto,
  Bucket,
  CallbackStatsQueryDto,
  MAX_CSV_ROWS,
  ORDER_CURSOR,
  OrderExportQueryDto,
  OrderQueryDto,
  RefundQueryDto,
} from './dto/admin-queries.dto';
import { ORDER_NO } from '../order/order-no';
import { ChannelCall } from '../trade/channel-call.entity';

const DEFAULT_PAGE = 50;
const MAX_DELIVERIES_LISTED = 1000;
const MAX_BUCKETS = 2000;
const BUCKET_MS: Record<Bucket, number> = { hour: 3600_000, day: 86_400_000 };
const BUCKET_FORMAT: Record<Bucket, string> = { hour: '%Y-%m-%dT%H:00:00.000Z', day: '%Y-%m-%dT00:00:00.000Z' };

export class CallbackStatsRow {
  @ApiProperty({ format: 'date-time', description: 'Start of the UTC bucket' })
  bucket: string;

  @ApiProperty()
  channel: string;

  @ApiProperty({ type: 'integer' })
  deliveries: number;

  @ApiProperty({ type: 'integer' })
  paymentDeliveries: number;

  @ApiProperty({ type: 'integer' })
  distinctPayments: number;

  @ApiProperty({ type: 'integer' })
  duplicateDeliveries: number;

  @ApiProperty({ description: 'duplicateDeliveries / paymentDeliveries' })
  duplicateRate: number;

  @ApiProperty({ type: Number, nullable: true })
  avgProcessingMs: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  maxProcessingMs: number | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'Deliveries by outcome (PAID, DUPLICATE, an anomaly type, a refund notice outcome…)',
    example: { PAID: 120, DUPLICATE: 3 },
  })
  outcomes: Record<string, number>;
}

export class CallbackStatsView {
  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;

  @ApiProperty({ enum: Object.values(Bucket) })
  bucket: Bucket;

  @ApiProperty({ type: [CallbackStatsRow] })
  rows: CallbackStatsRow[];
}

/** The read side of the admin API: plain reads, outside any transaction, on the reporting pool. */
@Injectable()
export class AdminQueries {
  constructor(
    private readonly reporting: ReportingDatabase,
    private readonly channels: PaymentChannels,
  ) {}

  async anomalies(query: AnomalyQueryDto): Promise<AnomalyPageView> {
    const where: FindOptionsWhere<PaymentAnomaly> = {};
    if (query.type) where.type = query.type;
    if (query.status) where.status = query.status;
    if (query.channel) where.channel = query.channel;
    const page = await this.page(PaymentAnomaly, where, query);
    return { items: page.items.map(toAnomalyView), nextCursor: page.nextCursor };
  }

  async refunds(query: RefundQueryDto): Promise<RefundPageView> {
    const where: FindOptionsWhere<Refund> = {};
    if (query.status) where.status = query.status;
    if (query.channel) where.channel = query.channel;
    const page = await this.page(Refund, where, query);
    const totals = await this.refundTotals(page.items);
    const items = page.items.map((r) => ({
      ...toRefundView(r),
      transactionRefundTotal: totals.get(paymentKey(r)) ?? 0,
    }));
    return { items, nextCursor: page.nextCursor };
  }

  /** What each listed refund's payment has taken for refunds now: what its approver weighs. */
  private async refundTotals(refunds: Refund[]): Promise<Map<string, number>> {
    if (refunds.length === 0) return new Map();
    const db = await this.reporting.dataSource();
    const payments = await db.getRepository(PaymentCallback).find({
      select: { channel: true, transactionId: true, refundReservedAmount: true },
      where: refunds.map((r) => ({ channel: r.channel, transactionId: r.transactionId })),
    });
    return new Map(payments.map((p) => [paymentKey(p), p.refundReservedAmount]));
  }

  /** Newest first by id, `createdAt` in [from, to), after the cursor: the one pagination of the admin lists. */
  private async page<T extends { id: string; createdAt: Date }>(
    entity: EntityTarget<T>,
    filters: FindOptionsWhere<T>,
    query: AnomalyQueryDto | RefundQueryDto,
  ): Promise<{ items: T[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE;
    const where = { ...filters } as FindOptionsWhere<{ id: string; createdAt: Date }>;
    const { from, to } = timeRange(query.from, query.to);
    if (from && to) where.createdAt = Between(from, new Date(to.getTime() - 1));
    else if (from) where.createdAt = MoreThanOrEqual(from);
    else if (to) where.createdAt = LessThan(to);
    if (query.cursor) where.id = LessThan(query.cursor);
    const db = await this.reporting.dataSource();
    const rows = await db.getRepository(entity).find({
      where: where as FindOptionsWhere<T>,
      order: { id: 'DESC' } as FindOptionsOrder<T>,
      take: limit + 1,
    });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[limit - 1].id : null };
  }

  /**
   * Orders newest first, by (createdAt, orderNo) after the cursor: a keyset page on
   * ix_payment_order_created_at, never an OFFSET. The CSV export reads the same, up to MAX_CSV_ROWS.
   */
  async orders(query: OrderQueryDto | OrderExportQueryDto, defaultLimit = DEFAULT_PAGE): Promise<OrderPageView> {
    const limit = Math.min(query.limit ?? defaultLimit, MAX_CSV_ROWS);
    const { from, to } = timeRange(query.from, query.to);
    const db = await this.reporting.dataSource();
    const select = db.getRepository(PaymentOrder).createQueryBuilder('o');
    if (query.status) select.andWhere('o.status = :status', { status: query.status });
    if (query.channel) select.andWhere('o.channel = :channel', { channel: query.channel });
    if (from) select.andWhere('o.created_at >= :from', { from });
    if (to) select.andWhere('o.created_at < :to', { to });
    const cursor = query.cursor ? ORDER_CURSOR.exec(query.cursor) : null;
    if (cursor) {
      const at = new Date(Number(cursor[1]));
      select.andWhere('(o.created_at < :at OR (o.created_at = :at AND o.order_no < :after))', { at, after: cursor[2] });
    }
    const rows = await select
      .orderBy('o.created_at', 'DESC')
      .addOrderBy('o.order_no', 'DESC')
      .limit(limit + 1)
      .getMany();
    const items = rows.slice(0, limit);
    const last = items[limit - 1];
    return {
      items: items.map(toOrderListItem),
      nextCursor: rows.length > limit ? `${last.createdAt.getTime()}.${last.orderNo}` : null,
    };
  }

  async order(orderNo: string): Promise<OrderDetailView> {
    const db = await this.reporting.dataSource();
    const order = ORDER_NO.test(orderNo) ? await db.getRepository(PaymentOrder).findOneBy({ orderNo }) : null;
    if (!order) throw new DomainError('OrderNotFound', `order ${orderNo.slice(0, 64)} not found`);
    const [history, payments, deliveries, totals, anomalies, refunds, channelCalls] = await Promise.all([
      db.getRepository(OrderStatusChange).find({ where: { orderNo }, order: { id: 'ASC' } }),
      db.getRepository(PaymentCallback).find({ where: { orderNo }, order: { id: 'ASC' } }),
      db.getRepository(CallbackDelivery).find({
        select: {
          id: true,
          channel: true,
          eventType: true,
          transactionId: true,
          outcome: true,
          receivedAt: true,
          processingMs: true,
        },
        where: { orderNo },
        order: { id: 'ASC' },
        take: MAX_DELIVERIES_LISTED,
      }),
      db.query<Array<{ n: string; first: Date | null; last: Date | null }>>(
        `SELECT SUM(1 + replays) AS n, MIN(received_at) AS first, MAX(received_at) AS last
         FROM callback_delivery WHERE order_no = ?`,
        [orderNo],
      ),
      db.getRepository(PaymentAnomaly).find({ where: { orderNo }, order: { id: 'ASC' } }),
      db.getRepository(Refund).find({ where: { orderNo }, order: { id: 'ASC' } }),
      db.getRepository(ChannelCall).find({ where: { orderNo }, order: { id: 'ASC' }, take: MAX_DELIVERIES_LISTED }),
    ]);
    const refundAnomalies = await db.getRepository(RefundAnomaly).find({ where: { orderNo }, order: { id: 'ASC' } });
    const createdPayment = await db.getRepository(ChannelPayment).findOneBy({ orderNo });
    return {
      order: toOrderDetailOrder(order),
      history: history.map(toStatusChangeView),
      payments: payments.map((p) => ({
        channel: p.channel,
        transactionId: p.transactionId,
        merchantId: p.merchantId,
        amount: p.amount,
        currency: p.currency,
        refundReservedAmount: p.refundReservedAmount,
        firstReceivedAt: p.firstReceivedAt.toISOString(),
      })),
      deliveries: {
        count: Number(totals[0].n),
        firstReceivedAt: totals[0].first?.toISOString() ?? null,
        lastReceivedAt: totals[0].last?.toISOString() ?? null,
        items: deliveries.map(toDeliverySummary),
      },
      anomalies: anomalies.map(toAnomalyView),
      refunds: refunds.map(toRefundView),
      refundAnomalies: refundAnomalies.map(toRefundAnomalyView),
      channelCalls: channelCalls.map(toChannelCallView),
      createdPayment: createdPayment && toPaymentView(createdPayment),
    };
  }

  /** Admins see the exact bytes; viewers see them with the payer's identifiers masked by the channel. */
  async delivery(id: string, role: AdminRole): Promise<DeliveryView> {
    const db = await this.reporting.dataSource();
    const delivery = /^[1-9]\d{0,18}$/.test(id) ? await db.getRepository(CallbackDelivery).findOneBy({ id }) : null;
    if (!delivery) throw new DomainError('DeliveryNotFound', `delivery ${id.slice(0, 32)} not found`);
    const channel = this.channels.get(delivery.channel);
    const encrypted = channel?.hasEncryptedContent?.(delivery.rawBody) ?? false;
    if (role === AdminRole.Admin) return toDeliveryView(delivery, encrypted);
    const maskPayer = (raw: Buffer) => channel?.maskPayer(raw) ?? raw;
    return toDeliveryView({ ...delivery, rawBody: maskPayer(delivery.rawBody) }, encrypted);
  }

  /**
   * A delivery's encrypted part (WeChat Pay APIv3's resource), decrypted by its channel: exact for
   * an admin, the payer masked for a viewer. One 404, DeliveryNotFound, whenever there is nothing to
   * open: no such delivery, its bytes pruned by retention, or nothing encrypted in it; the message says which.
   */
  async decryptedContent(id: string, role: AdminRole): Promise<DecryptedContentView> {
    const db = await this.reporting.dataSource();
    const delivery = /^[1-9]\d{0,18}$/.test(id) ? await db.getRepository(CallbackDelivery).findOneBy({ id }) : null;
    const nothingToOpen = (why: string) => new DomainError('DeliveryNotFound', `delivery ${id.slice(0, 32)} ${why}`);
    if (!delivery) throw nothingToOpen('not found');
    if (delivery.rawPrunedAt) throw nothingToOpen('has its bytes pruned by retention');
    const masked = role !== AdminRole.Admin;
    const content = this.channels
      .get(delivery.channel)
      ?.decryptedContent?.({ body: delivery.rawBody, headers: delivery.headers }, { masked });
    if (!content) throw nothingToOpen(`has nothing encrypted (${delivery.channel})`);
    return { deliveryId: delivery.id, channel: delivery.channel, masked, content };
  }

  /** Per bucket (UTC) and channel: what the operators' monitoring queries used to compute by hand. */
  async callbackStats(query: CallbackStatsQueryDto): Promise<CallbackStatsView> {
    const bucket = query.bucket ?? Bucket.Hour;
    const range = timeRange(query.from, query.to);
    const to = range.to ?? new Date();
    const from = range.from ?? new Date(to.getTime() - 24 * 3600_000);
    if ((to.getTime() - from.getTime()) / BUCKET_MS[bucket] > MAX_BUCKETS) {
      throw new DomainError('MalformedRequest', `from..to spans more than ${MAX_BUCKETS} ${bucket} buckets`);
    }
    const db = await this.reporting.dataSource();
    const rows: Array<Record<string, string | null>> = await db.query(
      `SELECT DATE_FORMAT(received_at, ?) AS bucket, channel,
         SUM(1 + replays) AS deliveries,
         SUM(pays * (1 + replays)) AS payment_deliveries,
         COUNT(DISTINCT CASE WHEN pays THEN transaction_id END) AS distinct_payments,
         AVG(processing_ms) AS avg_ms, MAX(processing_ms) AS max_ms
       FROM callback_delivery
       WHERE received_at >= ? AND received_at < ?
       GROUP BY bucket, channel ORDER BY bucket, channel`,
      [BUCKET_FORMAT[bucket], from, to],
    );
    const byOutcome: Array<{ bucket: string; channel: string; outcome: string; n: string }> = await db.query(
      `SELECT DATE_FORMAT(received_at, ?) AS bucket, channel, outcome, SUM(1 + replays) AS n
       FROM callback_delivery
       WHERE received_at >= ? AND received_at < ?
       GROUP BY bucket, channel, outcome`,
      [BUCKET_FORMAT[bucket], from, to],
    );
    const outcomes = new Map<string, Record<string, number>>();
    for (const r of byOutcome) {
      const key = `${r.bucket} ${r.channel}`;
      outcomes.set(key, { ...outcomes.get(key), [r.outcome]: Number(r.n) });
    }
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      bucket,
      rows: rows.map((row) => ({ ...toStatsRow(row), outcomes: outcomes.get(`${row.bucket} ${row.channel}`) ?? {} })),
    };
  }
}

const paymentKey = (p: Pick<Refund, 'channel' | 'transactionId'>): string =>
  JSON.stringify([p.channel, p.transactionId]);

function toStatsRow(row: Record<string, string | null>): Omit<CallbackStatsRow, 'outcomes'> {
  const paymentDeliveries = Number(row.payment_deliveries);
  const distinctPayments = Number(row.distinct_payments);
  const duplicateDeliveries = paymentDeliveries - distinctPayments;
  return {
    bucket: row.bucket!,
    channel: row.channel!,
    deliveries: Number(row.deliveries),
    paymentDeliveries,
    distinctPayments,
    duplicateDeliveries,
    duplicateRate: paymentDeliveries === 0 ? 0 : Math.round((duplicateDeliveries / paymentDeliveries) * 10000) / 10000,
    avgProcessingMs: row.avg_ms === null ? null : Math.round(Number(row.avg_ms) * 10) / 10,
    maxProcessingMs: row.max_ms === null ? null : Number(row.max_ms),
  };
}

function timeRange(fromText?: string, toText?: string): { from?: Date; to?: Date } {
  const from = fromText === undefined ? undefined : new Date(fromText);
  const to = toText === undefined ? undefined : new Date(toText);
  if (from && to && from >= to) throw new DomainError('MalformedRequest', 'from must be before to');
  return { from, to };
}
