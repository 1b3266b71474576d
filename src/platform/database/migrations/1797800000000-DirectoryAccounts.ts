import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts through the merchant directory: ACCOUNT_ADDED and ACCOUNT_CHANGE_PROPOSED rows of
 * merchant_change keep the account's public facts (account_facts, JSON) and name the sealed
 * secret (secret_id) in merchant_secret: the entry and its key files, AES-256-GCM under a key of
 * MERCHANT_SECRETS_KEYS_FILE (key_id).
 */
export class DirectoryAccounts1797800000000 implements MigrationInterface {
  name = 'DirectoryAccounts1797800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`merchant_secret\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`key_id\` varchar(32) NOT NULL, \`iv\` binary(12) NOT NULL, \`ciphertext\` mediumblob NOT NULL, \`tag\` binary(16) NOT NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_merchant_secret_key_id\` (\`key_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `ALTER TABLE \`merchant_change\` ADD \`secret_id\` bigint NULL, ADD \`account_facts\` text NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`merchant_change\` DROP COLUMN \`account_facts\`, DROP COLUMN \`secret_id\``);
    await queryRunner.query(`DROP TABLE \`merchant_secret\``);
  }
}
