import { MigrationInterface, QueryRunner } from 'typeorm';
import { binaryNoPadCollation } from '../binary-identifiers';

/**
 * Each account and sub-merchant the merchant directory adds, once (merchant_added): its primary key
 * is what refuses a second ACCOUNT_ADDED or SUB_MERCHANT_ADDED of the same one, across replicas.
 * Filled from the history: where two rows added the same one (before this key), the earliest is
 * kept, the one the directory's replay puts in force. Its identifiers are binary NO PAD, as the
 * directory compares them.
 */
export class MerchantAddedOnce1797810000000 implements MigrationInterface {
  name = 'MerchantAddedOnce1797810000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const binary = `CHARACTER SET utf8mb4 COLLATE ${await binaryNoPadCollation(queryRunner)}`;
    await queryRunner.query(
      `CREATE TABLE \`merchant_added\` (\`channel\` varchar(16) ${binary} NOT NULL, \`account_id\` varchar(64) ${binary} NOT NULL, \`sub_merchant_id\` varchar(64) ${binary} NOT NULL, \`change_id\` bigint NOT NULL, PRIMARY KEY (\`channel\`, \`account_id\`, \`sub_merchant_id\`)) ENGINE=InnoDB`,
    );
    // In id order, so that of duplicates the earliest is inserted and the later ones ignored.
    await queryRunner.query(
      `INSERT IGNORE INTO \`merchant_added\` (\`channel\`, \`account_id\`, \`sub_merchant_id\`, \`change_id\`)
       SELECT \`channel\`, \`account_id\`, \`sub_merchant_id\`, \`id\`
       FROM \`merchant_change\` WHERE \`action\` IN ('ACCOUNT_ADDED', 'SUB_MERCHANT_ADDED') ORDER BY \`id\``,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`merchant_added\``);
  }
}
