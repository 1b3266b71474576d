import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The time an order was sent to its channel, for channels that identify an order by it (UnionPay's
 * txnTime, yyyyMMddHHmmss in Beijing time). CHAR(14), not DATETIME: it is the channel's key of the
 * order, sent back byte for byte in a query, and a zone-less wall-clock time must not pass through
 * the connection's time zone on its way in or out.
 */
export class ChannelOrderTime1796900000000 implements MigrationInterface {
  name = 'ChannelOrderTime1796900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`payment_order\` ADD \`channel_order_time\` char(14) NULL AFTER \`sub_merchant_id\``,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`payment_order\` DROP COLUMN \`channel_order_time\``);
  }
}
