import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';
import { CouponIssueRepository } from './coupon-issue.repository';

/** A next-purchase coupon for every paid order. */
@Injectable()
@SubscribesTo({ consumer: 'issue-coupon', events: [EventType.PaymentSucceeded] })
export class IssueCouponHandler implements PaymentEventHandler {
  constructor(private readonly coupons: CouponIssueRepository) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.coupons.insert(
      event.orderNo,
      event.eventId,
      `CPN-${randomBytes(6).toString('hex').toUpperCase()}`,
      new Date(),
    );
  }
}
