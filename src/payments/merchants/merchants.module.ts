import { Module } from '@nestjs/common';
import { ChannelsModule } from '../../channels/channels.module';
import { CredentialsModule } from '../credentials/credentials.module';
import { MerchantChangeRepository } from './merchant-change.repository';
import { MerchantChanges } from './merchant-changes';
import { MerchantDirectory } from './merchant-directory';

/** The merchant directory: what operators add, disable and enable at runtime, beside the configuration's accounts. */
@Module({
  imports: [ChannelsModule, CredentialsModule],
  providers: [MerchantChangeRepository, MerchantDirectory, MerchantChanges],
  exports: [MerchantDirectory, MerchantChanges],
})
export class MerchantsModule {}
