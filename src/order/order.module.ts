import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { paymentQueryConfig } from '../platform/config/payment-query.config';
import { orderConfig } from '../platform/config/order.config';
import { serverConfig } from '../platform/config/server.config';
import { InternalApiGuard } from './internal-api.guard';
import { PaymentOrderController } from './payment-order.controller';
import { PaymentOrderRepository } from './payment-order.repository';
import { PaymentOrderService } from './payment-order.service';

@Module({
  imports: [
    ConfigModule.forFeature(serverConfig),
    ConfigModule.forFeature(paymentQueryConfig),
    ConfigModule.forFeature(orderConfig),
    ChannelsModule,
  ],
  controllers: [PaymentOrderController],
  providers: [PaymentOrderRepository, PaymentOrderService, InternalApiGuard],
  exports: [PaymentOrderRepository, PaymentOrderService, InternalApiGuard],
})
export class OrderModule {}
