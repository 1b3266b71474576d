import { MigrationInterface, QueryRunner } from 'typeorm';

export class RefundReliability1796100000000 implements MigrationInterface {
  name = 'RefundReliability1796100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`refund\` MODIFY \`status\` varchar(32) NOT NULL`);
    await queryRunner.query(`ALTER TABLE \`refund\` ADD \`accepted_at\` datetime(3) NULL`);
    await queryRunner.query(`ALTER TABLE \`refund\` ADD \`reviewed_by\` varchar(64) NULL`);
    await queryRunner.query(`ALTER TABLE \`refund\` ADD \`reviewed_at\` datetime(3) NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`refund\` DROP COLUMN \`reviewed_at\``);
    await queryRunner.query(`ALTER TABLE \`refund\` DROP COLUMN \`reviewed_by\``);
    await queryRunner.query(`ALTER TABLE \`refund\` DROP COLUMN \`accepted_at\``);
    await queryRunner.query(`ALTER TABLE \`refund\` MODIFY \`status\` varchar(16) NOT NULL`);
  }
}
