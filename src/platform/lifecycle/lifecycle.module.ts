import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ShutdownState } from './shutdown-state';

@Global()
@Module({ imports: [DiscoveryModule], providers: [ShutdownState], exports: [ShutdownState] })
export class LifecycleModule {}
