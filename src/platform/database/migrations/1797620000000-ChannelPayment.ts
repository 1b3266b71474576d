import { MigrationInterface, QueryRunner } from 'typeorm';
import { binaryNoPadCollation } from '../binary-identifiers';

/** The payment created at the channel for an order: its fixed terms, the claim, the buyer parameters, the expiry close. */
export class ChannelPayment1797620000000 implements MigrationInterface {
  name = 'ChannelPayment1797620000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The order number compares byte for byte, as in payment_order (BinaryIdentifiers).
    const collation = await binaryNoPadCollation(queryRunner);
    await queryRunner.query(
      `CREATE TABLE \`channel_payment\` (
        \`order_no\` varchar(64) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
        \`channel\` varchar(16) NOT NULL,
        \`method\` varchar(32) NOT NULL,
        \`request_hash\` char(64) NOT NULL,
        \`terms\` text NOT NULL,
        \`expires_at\` datetime(3) NOT NULL,
        \`state\` varchar(16) NOT NULL,
        \`attempts\` int NOT NULL,
        \`lease_until\` datetime(3) NULL,
        \`buyer\` text NULL,
        \`valid_until\` datetime(3) NULL,
        \`channel_trade_id\` varchar(128) NULL,
        \`failure_code\` varchar(64) NULL,
        \`failure_message\` varchar(500) NULL,
        \`close_due_at\` datetime(3) NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        INDEX \`ix_channel_payment_close_due_at\` (\`close_due_at\`),
        PRIMARY KEY (\`order_no\`)
      ) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`channel_payment\``);
  }
}
