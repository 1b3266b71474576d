import { Injectable } from '@nestjs/common';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';
import { PointsGrantRepository } from './points-grant.repository';

/** One point per whole currency unit paid. */
@Injectable()
@SubscribesTo({ consumer: 'grant-points', events: [EventType.PaymentSucceeded] })
export class GrantPointsHandler implements PaymentEventHandler {
  constructor(private readonly grants: PointsGrantRepository) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.grants.insert(event.orderNo, event.eventId, Math.floor(event.amount / 100), new Date());
  }
}
