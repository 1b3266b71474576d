import { MigrationInterface, QueryRunner } from 'typeorm';
import { makeIdentifiersBinary } from '../../../platform/database/binary-identifiers';

/**
 * The example handlers' tables, in a migration set of their own that runs only with EXAMPLE_HANDLERS=true. IF NOT
 * EXISTS: a database migrated before the set was split (AfterPaymentEvents1795986675375 made them) has them already.
 */
export class ExampleHandlerTables1796750000000 implements MigrationInterface {
  name = 'ExampleHandlerTables1796750000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE IF NOT EXISTS \`coupon_issue\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`order_no\` varchar(64) NOT NULL, \`event_id\` char(36) NOT NULL, \`coupon_code\` varchar(32) NOT NULL, \`issued_at\` datetime(3) NOT NULL, INDEX \`ix_coupon_issue_order_no\` (\`order_no\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE IF NOT EXISTS \`points_grant\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`order_no\` varchar(64) NOT NULL, \`event_id\` char(36) NOT NULL, \`points\` bigint NOT NULL, \`granted_at\` datetime(3) NOT NULL, INDEX \`ix_points_grant_order_no\` (\`order_no\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE IF NOT EXISTS \`shipment_request\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`order_no\` varchar(64) NOT NULL, \`event_id\` char(36) NOT NULL, \`requested_at\` datetime(3) NOT NULL, INDEX \`ix_shipment_request_order_no\` (\`order_no\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    // Their order and event ids compare byte for byte, like the core tables' (BinaryIdentifiers).
    await makeIdentifiersBinary(queryRunner, ['coupon_issue', 'points_grant', 'shipment_request']);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS \`shipment_request\``);
    await queryRunner.query(`DROP TABLE IF EXISTS \`points_grant\``);
    await queryRunner.query(`DROP TABLE IF EXISTS \`coupon_issue\``);
  }
}
