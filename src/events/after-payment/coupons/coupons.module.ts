import { Module } from '@nestjs/common';
import { IssueCouponHandler } from './issue-coupon.handler';

@Module({ providers: [IssueCouponHandler] })
export class CouponsModule {}
