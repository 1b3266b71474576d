import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { DirectoryAccounts } from './directory-accounts';
import { MerchantAccountChanges } from './merchant-account-changes';
import { MerchantSecretKeys } from './merchant-secret-keys';
import { MerchantSecretRepository } from './merchant-secret.repository';
import { merchantSecretsConfig } from './merchant-secrets.config';
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
  imports: [
    ConfigModule.forFeature(merchantSecretsConfig),
    ChannelsModule,
    CredentialsModule,
    IdempotencyModule,
    RefusedNotificationModule,
  ],
  providers: [
    MerchantChangeRepository,
    MerchantSecretRepository,
    MerchantSecretKeys,
    DirectoryAccounts,
    DirectoryClock,
    MerchantDirectory,
    MerchantChanges,
    MerchantAccountChanges,
    PlatformKeyDryRun,
  ],
  exports: [DirectoryClock, MerchantDirectory, MerchantChanges, MerchantAccountChanges, PlatformKeyDryRun],
})
export class MerchantsModule {}
