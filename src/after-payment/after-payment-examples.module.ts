import { Module } from '@nestjs/common';
import { CouponsModule } from './coupons/coupons.module';
import { PointsModule } from './points/points.module';
import { ShippingModule } from './shipping/shipping.module';

/** The example after-payment handlers; EXAMPLE_HANDLERS=false leaves them out (your own handlers replace them). */
@Module({ imports: [PointsModule, CouponsModule, ShippingModule] })
export class AfterPaymentExamplesModule {}
