import { Module } from '@nestjs/common';
import { ChannelsModule } from '../../channels/channels.module';
import { MerchantsModule } from '../../payments/merchants/merchants.module';
import { NotificationVerifier } from './notification-verifier';

/** Verification before anything else: the notification's channel verifies it, the merchant directory (in memory) admits its account. */
@Module({
  imports: [ChannelsModule, MerchantsModule],
  providers: [NotificationVerifier],
  exports: [NotificationVerifier, ChannelsModule],
})
export class SignatureModule {}
