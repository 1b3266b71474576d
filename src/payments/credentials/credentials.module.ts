import { Module } from '@nestjs/common';
import { ChannelsModule } from '../../channels/channels.module';
import { ChannelKeyFiles } from './channel-key-files';

/** The channels' keys and certificates while the service runs: re-read when their files change, their expiry watched. */
@Module({
  imports: [ChannelsModule],
  providers: [ChannelKeyFiles],
  exports: [ChannelKeyFiles],
})
export class CredentialsModule {}
