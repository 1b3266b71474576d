import { Module } from '@nestjs/common';
import { RequestShipmentHandler } from './request-shipment.handler';
import { ShipmentRequestRepository } from './shipment-request.repository';

@Module({ providers: [ShipmentRequestRepository, RequestShipmentHandler] })
export class ShippingModule {}
