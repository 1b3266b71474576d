import { Injectable } from '@nestjs/common';
import { EventType, PaymentEvent } from '../../payment-events';
import { PaymentEventHandler, SubscribesTo } from '../../subscribers/subscribes-to.decorator';
import { ShipmentRequestRepository } from './shipment-request.repository';

/** Asks the warehouse to ship a paid order. */
@Injectable()
@SubscribesTo({ consumer: 'request-shipment', events: [EventType.PaymentSucceeded] })
export class RequestShipmentHandler implements PaymentEventHandler {
  constructor(private readonly shipments: ShipmentRequestRepository) {}

  async handle(event: PaymentEvent): Promise<void> {
    await this.shipments.insert(event.orderNo, event.eventId, new Date());
  }
}
