import { MigrationInterface, QueryRunner } from 'typeorm';
import { binaryNoPadCollation } from '../binary-identifiers';

/**
 * The sub-merchant a service provider's payment was made for (a sub_mchid), on the
 * payment and on the order; and the sub-merchant whose bill a reconciliation run read ('' for an
 * account's own bill, so that the day's unique key still holds one run per bill). Binary NO PAD
 * like every other identifier.
 */
export class SubMerchants1796800000000 implements MigrationInterface {
  name = 'SubMerchants1796800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const collation = await binaryNoPadCollation(queryRunner);
    for (const table of ['payment_order', 'payment_callback']) {
      await queryRunner.query(
        `ALTER TABLE \`${table}\` ADD \`sub_merchant_id\` varchar(32) CHARACTER SET utf8mb4 COLLATE ${collation} NULL AFTER \`merchant_id\``,
      );
    }
    await queryRunner.query(
      `ALTER TABLE \`reconciliation_run\`
         ADD \`sub_merchant_id\` varchar(32) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL DEFAULT '' AFTER \`merchant_id\`,
         DROP INDEX \`uq_reconciliation_run_day\`,
         ADD UNIQUE INDEX \`uq_reconciliation_run_day\` (\`channel\`, \`merchant_id\`, \`sub_merchant_id\`, \`bill_date\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // Refuses (duplicate key) while sub-merchants' runs of one day exist: they have no place in the old key.
    await queryRunner.query(
      `ALTER TABLE \`reconciliation_run\`
         DROP INDEX \`uq_reconciliation_run_day\`,
         ADD UNIQUE INDEX \`uq_reconciliation_run_day\` (\`channel\`, \`merchant_id\`, \`bill_date\`),
         DROP COLUMN \`sub_merchant_id\``,
    );
    for (const table of ['payment_callback', 'payment_order']) {
      await queryRunner.query(`ALTER TABLE \`${table}\` DROP COLUMN \`sub_merchant_id\``);
    }
  }
}
