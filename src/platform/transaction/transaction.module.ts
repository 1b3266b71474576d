import { Global, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { withoutClsEnhancers } from './cls-without-enhancers';
import { TransactionRunner } from './transaction.runner';

@Global()
@Module({
  imports: [
    withoutClsEnhancers(
      ClsModule.forRoot({
        global: true,
        plugins: [
          new ClsPluginTransactional({
            imports: [TypeOrmModule],
            adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
          }),
        ],
      }),
    ),
  ],
  providers: [TransactionRunner],
  exports: [TransactionRunner],
})
export class TransactionModule {}
