import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { OptionalField } from '../../platform/http/optional';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `from` and `to`: bill dates (Beijing calendar days), both inclusive. */
export class ReconciliationListQueryDto {
  @ApiPropertyOptional({
    description: 'first bill date (Beijing), inclusive; default 6 days before to',
    example: '2026-11-24',
  })
  @OptionalField()
  @Matches(DATE, { message: 'from must be a bill date YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ description: 'last bill date (Beijing), inclusive; default yesterday', example: '2026-11-30' })
  @OptionalField()
  @Matches(DATE, { message: 'to must be a bill date YYYY-MM-DD' })
  to?: string;
}

/** One account only; every account of the channel when absent. */
export class ReconciliationAccountDto {
  @ApiPropertyOptional({ description: "one account (the channel's merchant or app id)", example: '1900009191' })
  @OptionalField()
  @IsString()
  @Length(1, 32, { message: 'merchantId must be 1 to 32 characters' })
  merchantId?: string;
}
