import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { makeCounterProvider } from '@willsoto/nestjs-prometheus';
import { ChannelsModule } from '../../channels/channels.module';
import { refusedNotificationsConfig } from './refused-notifications.config';
import { RefusedNotificationRepository } from './refused-notification.repository';
import { REFUSED_NOTIFICATIONS_TOTAL, RefusedNotifications } from './refused-notifications';

/** Refused notifications kept for operators: the notify route's hook, and the rows the admin API reads. */
@Module({
  imports: [ConfigModule.forFeature(refusedNotificationsConfig), ChannelsModule],
  providers: [
    RefusedNotificationRepository,
    RefusedNotifications,
    makeCounterProvider({
      name: REFUSED_NOTIFICATIONS_TOTAL,
      help:
        'Refused notifications (signature, key, merchant, decryption, unknown order) by channel, reason and what became of them: ' +
        'KEPT (a new row), REPEAT (the same bytes again, counted on their row), DROPPED (over REFUSED_NOTIFICATIONS_PER_HOUR), ' +
        'BUSY (too many at once on this replica), FAILED (the database refused the write)',
      labelNames: ['channel', 'reason', 'result'],
    }),
  ],
  exports: [RefusedNotificationRepository, RefusedNotifications],
})
export class RefusedNotificationModule {}
