import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { EventsModule } from '../events/events.module';
import { SpoolModule } from '../spool/spool.module';
import { EventsHealthIndicator } from './events.health';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule, EventsModule, SpoolModule],
  controllers: [HealthController],
  providers: [EventsHealthIndicator],
})
export class HealthModule {}
