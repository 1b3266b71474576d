import { Module } from '@nestjs/common';
import { ChannelsModule } from '../../channels/channels.module';
import { CredentialsModule } from '../credentials/credentials.module';
import { MerchantChangeRepository } from './merchant-change.repository';
import { MerchantChanges } from './merchant-changes';
import { DirectoryClock, MerchantDirectory } from './merchant-directory';
import { PlatformKeyDryRun } from './platform-key-dry-run';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { RefusedNotificationModule } from '../refused-notification/refused-notification.module';

/** The merchant directory: what operators add, disable and enable at runtime, beside the configuration's accounts. */
@Module({
  imports: [ChannelsModule, CredentialsModule, IdempotencyModule, RefusedNotificationModule],
  providers: [MerchantChangeRepository, DirectoryClock, MerchantDirectory, MerchantChanges, PlatformKeyDryRun],
  exports: [DirectoryClock, MerchantDirectory, MerchantChanges, PlatformKeyDryRun],
})
export class MerchantsModule {}
