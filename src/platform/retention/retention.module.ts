import { DynamicModule, Module, ModuleMetadata, Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { retentionConfig } from '../config/retention.config';
import { RetentionPruner } from './retention-pruner';
import { RETENTION_TASKS, RetentionTask } from './retention-task';
import { RetentionWorker } from './retention.worker';

/**
 * The retention worker; the tables' tasks come from where the app is composed (app.module.ts), in
 * order, with the modules that export the repositories they ask to prune.
 */
@Module({})
export class RetentionModule {
  static forRoot(tasks: Type<RetentionTask>[], repositories: ModuleMetadata['imports'] = []): DynamicModule {
    return {
      module: RetentionModule,
      imports: [ConfigModule.forFeature(retentionConfig), ...repositories],
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
