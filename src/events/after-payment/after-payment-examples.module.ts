import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { databaseConfig } from '../../platform/config/database.config';
import { CouponsModule } from './coupons/coupons.module';
import { ExampleSchema } from './example-schema';
import { PointsModule } from './points/points.module';
import { ShippingModule } from './shipping/shipping.module';

/**
 * The example after-payment handlers, only with EXAMPLE_HANDLERS=true (they grant fake points, coupons and shipments);
 * their tables come with them (ExampleSchema), never into a production schema that does not enable them.
 */
@Module({
  imports: [ConfigModule.forFeature(databaseConfig), PointsModule, CouponsModule, ShippingModule],
  providers: [ExampleSchema],
})
export class AfterPaymentExamplesModule {}
