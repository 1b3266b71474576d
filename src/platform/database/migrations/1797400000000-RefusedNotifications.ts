import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refused notifications kept for operators (bad signature, unknown key, foreign merchant,
 * undecryptable, unknown order), one row per (channel, bytes), and the hourly claims on their caps.
 */
export class RefusedNotifications1797400000000 implements MigrationInterface {
  name = 'RefusedNotifications1797400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`refused_notification\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`channel\` varchar(16) NOT NULL, \`notify_path\` varchar(32) NOT NULL, \`body_sha256\` binary(32) NOT NULL, \`reason\` varchar(32) NOT NULL, \`raw_body\` mediumblob NOT NULL, \`headers\` json NOT NULL, \`first_seen_at\` datetime(3) NOT NULL, \`last_seen_at\` datetime(3) NOT NULL, \`times_seen\` int UNSIGNED NOT NULL DEFAULT '1', \`status\` varchar(16) NOT NULL DEFAULT 'REFUSED', \`reverify_count\` int UNSIGNED NOT NULL DEFAULT '0', \`reverified_at\` datetime(3) NULL, \`reverified_by\` varchar(64) NULL, \`reverify_reason\` varchar(32) NULL, INDEX \`ix_refused_notification_first_seen\` (\`first_seen_at\`), INDEX \`ix_refused_notification_reason\` (\`reason\`, \`first_seen_at\`), UNIQUE INDEX \`uq_refused_notification_body\` (\`channel\`, \`body_sha256\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`refused_notification_hour\` (\`channel\` varchar(16) NOT NULL, \`hour\` datetime NOT NULL, \`kind\` varchar(8) NOT NULL, \`kept\` int UNSIGNED NOT NULL DEFAULT '0', \`dropped\` int UNSIGNED NOT NULL DEFAULT '0', PRIMARY KEY (\`channel\`, \`hour\`, \`kind\`)) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`refused_notification_hour\``);
    await queryRunner.query(`DROP TABLE \`refused_notification\``);
  }
}
