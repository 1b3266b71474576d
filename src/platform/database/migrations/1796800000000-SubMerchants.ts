import { MigrationInterface, QueryRunner } from 'typeorm';
import { binaryNoPadCollation } from '../binary-identifiers';

/**
 * The sub-merchant a service provider's payment was made for (WeChat Pay's sub_mchid), on the
 * payment and on the order; binary NO PAD like every other identifier.
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
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['payment_callback', 'payment_order']) {
      await queryRunner.query(`ALTER TABLE \`${table}\` DROP COLUMN \`sub_merchant_id\``);
    }
  }
}
