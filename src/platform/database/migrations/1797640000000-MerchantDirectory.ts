import { MigrationInterface, QueryRunner } from 'typeorm';
import { makeIdentifiersBinary } from '../binary-identifiers';

/** The merchant directory's append-only history (merchant_change): what operators add, disable and enable at runtime. */
export class MerchantDirectory1797640000000 implements MigrationInterface {
  name = 'MerchantDirectory1797640000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`merchant_change\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`channel\` varchar(16) NOT NULL, \`account_id\` varchar(64) NOT NULL, \`sub_merchant_id\` varchar(64) NOT NULL, \`action\` varchar(24) NOT NULL, \`sub_app_id\` varchar(64) NULL, \`decides_change_id\` bigint NULL, \`operator_id\` varchar(64) NOT NULL, \`reason\` varchar(256) NULL, \`created_at\` datetime(3) NOT NULL, UNIQUE INDEX \`uq_merchant_change_decides\` (\`decides_change_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    // Identifiers are binary NO PAD, as in every table: `aB3` and `Ab3` are two.
    await makeIdentifiersBinary(queryRunner, ['merchant_change']);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`merchant_change\``);
  }
}
