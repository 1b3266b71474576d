import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { PaymentNotification } from '../signature/verified-notification';

const MAX_BATCH = 128;
const MAX_WAIT_MS = 2;

interface Pending {
  payment: PaymentNotification;
  receivedAt: Date;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Records repeated deliveries of committed payments in groups: one transaction writes the raw
 * deliveries and bumps the counters for up to MAX_BATCH of them (group commit). Each caller's
 * promise settles only when its group has committed, so a delivery is never acked before it is
 * on record; a failed group fails all its callers, and the platform retries them.
 */
@Injectable()
export class DuplicateDeliveryRecorder {
  private readonly logger = new Logger(DuplicateDeliveryRecorder.name);
  private queue: Pending[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  record(payment: PaymentNotification): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ payment, receivedAt: new Date(), resolve, reject });
      if (this.queue.length >= MAX_BATCH) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), MAX_WAIT_MS);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    // One group at a time per instance: groups never contend with each other for the same counters.
    this.flushing = this.flushing.then(() => this.write(batch));
    if (this.queue.length > 0) this.timer = setTimeout(() => this.flush(), 0);
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      await this.txHost.withTransaction(async () => {
        await this.insertDeliveries(batch);
        await this.countDeliveries(batch);
      });
      for (const p of batch) p.resolve();
    } catch (error) {
      this.logger.warn(`recording ${batch.length} repeated deliveries failed: ${(error as Error).message}`);
      for (const p of batch) p.reject(error);
    }
  }

  private async insertDeliveries(batch: Pending[]): Promise<void> {
    const rows = batch.map(({ payment, receivedAt }) => [
      payment.channel,
      payment.eventType,
      payment.transactionId,
      payment.outTradeNo,
      'DUPLICATE',
      payment.rawBody,
      JSON.stringify(payment.headers),
      receivedAt,
    ]);
    await this.txHost.tx.query(
      `INSERT INTO callback_delivery (channel, event_type, transaction_id, order_no, outcome, raw_body, headers, received_at) VALUES ?`,
      [rows],
    );
  }

  /** Only ever UPDATEs existing dedup records: a group can bump a counter, never claim a payment. */
  private async countDeliveries(batch: Pending[]): Promise<void> {
    const perKey = new Map<string, { channel: string; transactionId: string; count: number; last: Date }>();
    for (const { payment, receivedAt } of batch) {
      const key = `${payment.channel}:${payment.transactionId}`;
      const entry = perKey.get(key) ?? {
        channel: payment.channel,
        transactionId: payment.transactionId,
        count: 0,
        last: receivedAt,
      };
      entry.count++;
      entry.last = receivedAt;
      perKey.set(key, entry);
    }
    // Sorted, so that two replicas' groups lock shared rows in the same order.
    const entries = [...perKey.values()].sort((a, b) =>
      a.channel + a.transactionId < b.channel + b.transactionId ? -1 : 1,
    );
    const derived = entries
      .map(() => 'SELECT ? AS channel, ? AS transaction_id, ? AS n, ? AS received_at')
      .join(' UNION ALL ');
    await this.txHost.tx.query(
      `UPDATE payment_callback c JOIN (${derived}) d ON c.channel = d.channel AND c.transaction_id = d.transaction_id
       SET c.delivery_count = c.delivery_count + d.n, c.last_received_at = GREATEST(c.last_received_at, d.received_at)`,
      entries.flatMap((e) => [e.channel, e.transactionId, e.count, e.last]),
    );
  }
}
