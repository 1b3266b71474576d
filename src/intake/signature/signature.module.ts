import { Module } from '@nestjs/common';
import { ChannelsModule } from '../../channels/channels.module';
import { NotificationVerifier } from './notification-verifier';

/** Verification before anything else: the notification's channel verifies it. */
@Module({
  imports: [ChannelsModule],
  providers: [NotificationVerifier],
  exports: [NotificationVerifier, ChannelsModule],
})
export class SignatureModule {}
