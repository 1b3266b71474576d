import { Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { eventsConfig } from '../events.config';
import { RabbitmqConnection } from './rabbitmq.connection';

@Global()
@Module({
  imports: [ConfigModule.forFeature(eventsConfig)],
  providers: [RabbitmqConnection],
  exports: [RabbitmqConnection, ConfigModule],
})
export class RabbitmqModule {}
