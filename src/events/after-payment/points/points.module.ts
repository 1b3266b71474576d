import { Module } from '@nestjs/common';
import { GrantPointsHandler } from './grant-points.handler';

@Module({ providers: [GrantPointsHandler] })
export class PointsModule {}
