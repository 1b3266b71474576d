import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { NotificationGuard } from './notification.guard';

/** Verification before anything else: the guard asks the notification's channel to verify it. */
@Module({
  imports: [ChannelsModule],
  providers: [NotificationGuard],
  exports: [NotificationGuard, ChannelsModule],
})
export class SignatureModule {}
