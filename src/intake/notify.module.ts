import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { databaseConfig } from '../platform/config/database.config';
import { IdempotencyModule } from '../payments/idempotency/idempotency.module';
import { SettlementModule } from '../settlement/settlement.module';
import { RefusedNotificationModule } from '../payments/refused-notification/refused-notification.module';
import { SignatureModule } from './signature/signature.module';
import { CredentialsModule } from '../payments/credentials/credentials.module';
import { SpoolModule } from './spool/spool.module';
import { CommittedRepeatFastPath } from './committed-repeat.fast-path';
import { NotificationIntake } from './notification-intake';
import { NotifyRefusals } from './notify-refusals';

/** The notify route's use case and its parts; app.factory.ts serves the route itself (serveNotifyRoute). */
@Module({
  imports: [
    ConfigModule.forFeature(databaseConfig),
    SignatureModule,
    IdempotencyModule,
    SettlementModule,
    SpoolModule,
    RefusedNotificationModule,
    // The keys notifications are verified with, re-read when their files change.
    CredentialsModule,
  ],
  providers: [CommittedRepeatFastPath, NotificationIntake, NotifyRefusals],
  // The admin API re-verifies a kept refused notification through the same use case.
  exports: [NotificationIntake],
})
export class NotifyModule {}
