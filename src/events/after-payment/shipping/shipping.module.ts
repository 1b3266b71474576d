import { Module } from '@nestjs/common';
import { RequestShipmentHandler } from './request-shipment.handler';

@Module({ providers: [RequestShipmentHandler] })
export class ShippingModule {}
