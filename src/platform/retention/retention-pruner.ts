import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { retentionConfig } from '../config/retention.config';
import { RETENTION_TASKS, RetentionTask } from './retention-task';

/** What one batch did in each table. */
export type PruneCounts = Record<string, number>;

/**
 * One bounded batch per table at a time, asked of the features that own the tables
 * (RETENTION_TASKS, listed in their order where the app is composed), one after the other. Rows old
 * enough to prune are never touched by the notify path, so it never waits on the prune.
 */
@Injectable()
export class RetentionPruner {
  constructor(
    @Inject(RETENTION_TASKS) private readonly tasks: RetentionTask[],
    @Inject(retentionConfig.KEY) private readonly config: ConfigType<typeof retentionConfig>,
  ) {}

  /** One batch of each; `now` decides the horizons. */
  async pruneBatch(now = new Date()): Promise<PruneCounts> {
    const counts: PruneCounts = {};
    for (const task of this.tasks) counts[task.table] = await task.pruneBatch(now, this.config);
    return counts;
  }
}
