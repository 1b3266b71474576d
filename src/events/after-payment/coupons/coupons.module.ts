import { Module } from '@nestjs/common';
import { CouponIssueRepository } from './coupon-issue.repository';
import { IssueCouponHandler } from './issue-coupon.handler';

@Module({ providers: [CouponIssueRepository, IssueCouponHandler] })
export class CouponsModule {}
