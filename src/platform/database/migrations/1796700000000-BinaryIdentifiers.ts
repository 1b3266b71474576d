import { MigrationInterface, QueryRunner } from 'typeorm';
import { makeIdentifiersBinary, makeIdentifiersCaseInsensitive } from '../binary-identifiers';

/**
 * Identifier columns (order, transaction, refund, merchant and event ids) compare byte for byte:
 * binary NO PAD. Stops with a report, changing nothing, where values differ only by case or
 * trailing space (see binary-identifiers.ts). This file exports the migration class only: TypeORM
 * takes every export of a migrations folder for a migration.
 */
export class BinaryIdentifiers1796700000000 implements MigrationInterface {
  name = 'BinaryIdentifiers1796700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await makeIdentifiersBinary(queryRunner);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await makeIdentifiersCaseInsensitive(queryRunner);
  }
}
