import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { MerchantAction } from '../../payments/merchants/merchant-change.entity';

const ID = /^[A-Za-z0-9_\-]{1,64}$/;

/** A sub-merchant a service provider's account collects for, added at runtime. */
export class AddSubMerchantDto {
  @ApiProperty({ example: '1900000109', description: "The sub-merchant's id (WeChat Pay's sub_mchid)" })
  @IsString()
  @Matches(ID, { message: 'subMerchantId must be 1 to 64 letters, digits, _ or -' })
  subMerchantId: string;

  @ApiPropertyOptional({
    example: 'wx8888888888888888',
    description: 'Its own app (sub_appid): its notifications must then name it',
  })
  @IsOptional()
  @IsString()
  @Matches(ID, { message: 'subAppId must be 1 to 64 letters, digits, _ or -' })
  subAppId?: string;
}

/** Disabling or enabling an account, or one of its sub-merchants when named. */
export class MerchantTargetDto {
  @ApiPropertyOptional({ description: 'A sub-merchant of the account; absent: the account itself' })
  @IsOptional()
  @IsString()
  @Matches(ID, { message: 'subMerchantId must be 1 to 64 letters, digits, _ or -' })
  subMerchantId?: string;
}

export class DisableMerchantDto extends MerchantTargetDto {
  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256, { message: 'reason must be 1 to 256 characters' })
  @Matches(/\S/, { message: 'reason must not be blank' })
  reason: string;
}

/** One row of the merchant directory's history. */
export class MerchantChangeView {
  @ApiProperty() id: string;
  @ApiProperty() channel: string;
  @ApiProperty() accountId: string;
  @ApiProperty({ description: "'' for the account itself" }) subMerchantId: string;
  @ApiProperty({ enum: Object.values(MerchantAction) }) action: MerchantAction;
  @ApiProperty({ nullable: true, type: String }) subAppId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'APPROVED, REJECTED: the proposal decided' })
  decidesChangeId: string | null;
  @ApiProperty() operatorId: string;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  @ApiProperty() createdAt: Date;
}

export class ListedSubMerchantView {
  @ApiProperty() subMerchantId: string;
  @ApiPropertyOptional() subAppId?: string;
  @ApiProperty({ enum: ['configuration', 'directory'] }) source: 'configuration' | 'directory';
  @ApiProperty() disabled: boolean;
}

export class ListedAccountView {
  @ApiProperty() channel: string;
  @ApiProperty() account: string;
  @ApiProperty() disabled: boolean;
  @ApiProperty({ type: [ListedSubMerchantView] }) subMerchants: ListedSubMerchantView[];
}

export class MerchantDirectoryView {
  @ApiProperty({ description: 'The version every replica applies within applyWithinMs (the last change id)' })
  version: string;
  @ApiProperty() applyWithinMs: number;
  @ApiProperty({ type: [ListedAccountView] }) accounts: ListedAccountView[];
  @ApiProperty({ type: [MerchantChangeView], description: 'Proposals waiting for a second admin' })
  pending: MerchantChangeView[];
}

export class MerchantHistoryQueryDto {
  @ApiPropertyOptional({ description: 'Changes before this id (the next page)' })
  @IsOptional()
  @Matches(/^\d{1,19}$/, { message: 'before must be a change id' })
  before?: string;
}
