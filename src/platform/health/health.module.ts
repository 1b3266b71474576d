import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { serverConfig } from '../config/server.config';
import { EventsModule } from '../../events/events.module';
import { SpoolModule } from '../../intake/spool/spool.module';
import { EventsHealthIndicator } from './events.health';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule, EventsModule, SpoolModule, ConfigModule.forFeature(serverConfig)],
  controllers: [HealthController],
  providers: [EventsHealthIndicator],
})
export class HealthModule {}
