import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { NotifyModule } from '../intake/notify.module';
import { SpoolReplayer } from './spool-replayer';
import { SpoolModule } from './spool.module';

/** Apart from SpoolModule because it needs the notify pipeline, which itself needs the spool. */
@Module({
  imports: [SpoolModule, NotifyModule, IdempotencyModule],
  providers: [SpoolReplayer],
})
export class SpoolReplayModule {}
