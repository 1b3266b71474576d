import { DynamicModule, Module, Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { retentionConfig } from '../config/retention.config';
import { RetentionPruner } from './retention-pruner';
import { RETENTION_TASKS, RetentionTask } from './retention-task';
import { RetentionWorker } from './retention.worker';

/** The retention worker; the tables' tasks come from where the app is composed (app.module.ts), in order. */
@Module({})
export class RetentionModule {
  static forRoot(tasks: Type<RetentionTask>[]): DynamicModule {
    return {
      module: RetentionModule,
      imports: [ConfigModule.forFeature(retentionConfig)],
      providers: [
        ...tasks,
        { provide: RETENTION_TASKS, useFactory: (...each: RetentionTask[]) => each, inject: tasks },
        RetentionPruner,
        RetentionWorker,
      ],
      exports: [RetentionPruner],
    };
  }
}
