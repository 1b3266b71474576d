import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { serverConfig } from './config/server.config';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotifyModule } from './notify/notify.module';
import { OrderModule } from './order/order.module';
import { TransactionModule } from './transaction/transaction.module';
import { EventsModule } from './events/events.module';
import { RabbitmqModule } from './rabbitmq/rabbitmq.module';
import { CouponsModule } from './after-payment/coupons/coupons.module';
import { PointsModule } from './after-payment/points/points.module';
import { ShippingModule } from './after-payment/shipping/shipping.module';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [serverConfig] }),
    LoggingModule,
    DatabaseModule,
    TransactionModule,
    MetricsModule,
    RabbitmqModule,
    OrderModule,
    NotifyModule,
    EventsModule,
    PointsModule,
    CouponsModule,
    ShippingModule,
    HealthModule,
  ],
})
export class AppModule {}
