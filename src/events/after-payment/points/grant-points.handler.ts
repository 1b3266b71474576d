import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';

/** One point per whole currency unit paid. */
@Injectable()
@SubscribesTo({ consumer: 'grant-points', events: [EventType.PaymentSucceeded] })
export class GrantPointsHandler implements PaymentEventHandler {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.txHost.tx.query(
      'INSERT INTO points_grant (order_no, event_id, points, granted_at) VALUES (?, ?, ?, ?)',
      [event.orderNo, event.eventId, Math.floor(event.amount / 100), new Date()],
    );
  }
}
