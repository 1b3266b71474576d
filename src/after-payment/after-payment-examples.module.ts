import { Module } from '@nestjs/common';
import { CouponsModule } from './coupons/coupons.module';
import { PointsModule } from './points/points.module';
import { ShippingModule } from './shipping/shipping.module';

/** The example after-payment handlers, only with EXAMPLE_HANDLERS=true (they grant fake points, coupons and shipments). */
@Module({ imports: [PointsModule, CouponsModule, ShippingModule] })
export class AfterPaymentExamplesModule {}
