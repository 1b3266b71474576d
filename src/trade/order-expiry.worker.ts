import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { ChannelPaymentRepository } from '../order/channel-payment.repository';
import { paymentQueryConfig } from '../order/payment-query.config';
import { PollingWorker } from '../platform/lifecycle/polling-worker';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { TradeCloseService } from './trade-close.service';

/** How long after a close that failed (no answer from the channel) it is tried again. */
const CLOSE_RETRY_MS = 60_000;
const BATCH = 16;

/**
 * In every instance: closes, at the channel and then here, the orders whose payment this service
 * created once their expiry (the channel's time_expire) has passed, through the same close an
 * operator's POST /payment-orders/:orderNo/close makes; a trade paid meanwhile is applied instead.
 * Orders are claimed with SKIP LOCKED and pushed to a later retry in the same transaction, so each
 * is closed by one replica; a close the channel could not confirm is tried again a minute later.
 */
@Injectable()
export class OrderExpiryWorker extends PollingWorker {
  protected readonly logger = new Logger(OrderExpiryWorker.name);

  constructor(
    @Inject(paymentQueryConfig.KEY) private readonly config: ConfigType<typeof paymentQueryConfig>,
    private readonly payments: ChannelPaymentRepository,
    private readonly transactions: TransactionRunner,
    private readonly closes: TradeCloseService,
  ) {
    super();
  }

  protected get intervalMs(): number {
    return this.config.pollIntervalMs;
  }

  protected async pollOnce(): Promise<boolean> {
    const now = new Date();
    const due = await this.transactions.run(() =>
      this.payments.claimDueCloses(now, BATCH, new Date(now.getTime() + CLOSE_RETRY_MS)),
    );
    for (const orderNo of due) await this.closeExpired(orderNo);
    return due.length === BATCH;
  }

  private async closeExpired(orderNo: string): Promise<void> {
    try {
      await this.closes.close(orderNo);
      await this.payments.closeDone(orderNo);
    } catch (error) {
      // Paid at the channel (applied), or no answer: the row is due again a minute later, and
      // skipped for good once the order is no longer WAIT_PAY.
      this.logger.warn(`order ${orderNo}: expired, close not done: ${(error as Error).message}`);
    }
  }
}
