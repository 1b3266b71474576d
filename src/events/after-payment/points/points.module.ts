import { Module } from '@nestjs/common';
import { GrantPointsHandler } from './grant-points.handler';
import { PointsGrantRepository } from './points-grant.repository';

@Module({ providers: [PointsGrantRepository, GrantPointsHandler] })
export class PointsModule {}
