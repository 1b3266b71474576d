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
 * Records repeated deliveries of committed payments in groups: one INSERT writes up to MAX_BATCH
 * raw deliveries (group commit). Each caller's promise settles only when its group is written, so
 * a delivery is never acked before it is on record; a failed group fails all its callers, and the
 * platform retries them.
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
    // One group at a time per instance keeps the writes in arrival order.
    this.flushing = this.flushing.then(() => this.write(batch));
    if (this.queue.length > 0) this.timer = setTimeout(() => this.flush(), 0);
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      await this.insertDeliveries(batch);
      for (const p of batch) p.resolve();
    } catch (error) {
      this.logger.warn(`recording ${batch.length} repeated deliveries failed: ${(error as Error).message}`);
      for (const p of batch) p.reject(error);
    }
  }

  /** One multi-row INSERT: a single statement, so the group is recorded whole or not at all. */
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
}
