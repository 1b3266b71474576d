import { IsOptional, IsString, Length, Matches } from 'class-validator';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `from` and `to`: bill dates (Beijing calendar days), both inclusive. */
export class ReconciliationListQueryDto {
  @IsOptional()
  @Matches(DATE, { message: 'from must be a bill date YYYY-MM-DD' })
  from?: string;

  @IsOptional()
  @Matches(DATE, { message: 'to must be a bill date YYYY-MM-DD' })
  to?: string;
}

/** One account only; every account of the channel when absent. */
export class ReconciliationAccountDto {
  @IsOptional()
  @IsString()
  @Length(1, 32, { message: 'merchantId must be 1 to 32 characters' })
  merchantId?: string;
}
