import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { databaseConfig } from '../platform/config/database.config';
import { IdempotencyModule } from '../payments/idempotency/idempotency.module';
import { SettlementModule } from '../settlement/settlement.module';
import { SignatureModule } from './signature/signature.module';
import { SpoolModule } from './spool/spool.module';
import { CommittedRepeatFastPath } from './committed-repeat.fast-path';
import { NotifyController } from './notify.controller';
import { NotifyTransactionInterceptor } from './notify-transaction.interceptor';
import { NotificationIntake } from './notification-intake';

@Module({
  imports: [ConfigModule.forFeature(databaseConfig), SignatureModule, IdempotencyModule, SettlementModule, SpoolModule],
  controllers: [NotifyController],
  providers: [CommittedRepeatFastPath, NotificationIntake, NotifyTransactionInterceptor],
})
export class NotifyModule {}
