import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { serverConfig } from '../config/server.config';
import { InternalApiGuard } from './internal-api.guard';
import { PaymentOrderController } from './payment-order.controller';
import { PaymentOrderRepository } from './payment-order.repository';
import { PaymentOrderService } from './payment-order.service';

@Module({
  imports: [ConfigModule.forFeature(serverConfig)],
  controllers: [PaymentOrderController],
  providers: [PaymentOrderRepository, PaymentOrderService, InternalApiGuard],
  exports: [PaymentOrderRepository],
})
export class OrderModule {}
