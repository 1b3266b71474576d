import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';

/** Asks the warehouse to ship a paid order. */
@Injectable()
@SubscribesTo({ consumer: 'request-shipment', events: [EventType.PaymentSucceeded] })
export class RequestShipmentHandler implements PaymentEventHandler {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.txHost.tx.query('INSERT INTO shipment_request (order_no, event_id, requested_at) VALUES (?, ?, ?)', [
      event.orderNo,
      event.eventId,
      new Date(),
    ]);
  }
}
