import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform keys and certificates through the merchant directory: a dry run (KEY_DRY_RUN) and a
 * proposal to activate a candidate (PLATFORM_KEY_PROPOSED) are rows of merchant_change, with the
 * key file's kind, the candidate (public material only: a public key or a certificate, in PEM),
 * its fingerprint, the overlap window and, for a key named by an id (WeChat Pay's), that id.
 */
export class DirectoryPlatformKeys1797700000000 implements MigrationInterface {
  name = 'DirectoryPlatformKeys1797700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`merchant_change\` ADD \`key_kind\` varchar(32) NULL, ADD \`key_id\` varchar(64) NULL, ADD \`candidate_pem\` text NULL, ADD \`candidate_fingerprint\` char(64) NULL, ADD \`overlap_seconds\` int NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX \`ix_merchant_change_fingerprint\` ON \`merchant_change\` (\`candidate_fingerprint\`, \`id\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_merchant_change_fingerprint\` ON \`merchant_change\``);
    await queryRunner.query(
      `ALTER TABLE \`merchant_change\` DROP COLUMN \`overlap_seconds\`, DROP COLUMN \`candidate_fingerprint\`, DROP COLUMN \`candidate_pem\`, DROP COLUMN \`key_id\`, DROP COLUMN \`key_kind\``,
    );
  }
}
