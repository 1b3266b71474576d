import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';

/** A next-purchase coupon for every paid order. */
@Injectable()
@SubscribesTo({ consumer: 'issue-coupon', events: [EventType.PaymentSucceeded] })
export class IssueCouponHandler implements PaymentEventHandler {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.txHost.tx.query(
      'INSERT INTO coupon_issue (order_no, event_id, coupon_code, issued_at) VALUES (?, ?, ?, ?)',
      [event.orderNo, event.eventId, `CPN-${randomBytes(6).toString('hex').toUpperCase()}`, new Date()],
    );
  }
}
