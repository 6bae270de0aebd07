import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { SKU_PATTERN } from '../common/validation.js';

export class LineDto {
  @ApiProperty({ pattern: SKU_PATTERN.source, example: 'SKU-1' })
  @IsString()
  @Matches(SKU_PATTERN, { message: 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' })
  sku!: string;

  @ApiProperty({ minimum: 1, maximum: 1000, example: 2 })
  @IsInt()
  @Min(1)
  @Max(1000)
  quantity!: number;
}


export class UpsertSkuDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(0, 200)
  name?: string;

  @ApiProperty({ minimum: 0, example: 1250 })
  @IsInt()
  @Min(0)
  @Max(1_000_000_000_000)
  priceMinor!: number;

  @ApiProperty({ example: 'USD', pattern: '^[A-Z]{3}$' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code (3 upper-case letters)' })
  currency!: string;

  @ApiProperty({ minimum: 0, example: 100 })
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  onHand!: number;
}

export class InventoryViewDto {
  @ApiProperty() sku!: string;
  @ApiProperty() name!: string;
  @ApiProperty() priceMinor!: number;
  @ApiProperty() currency!: string;
  @ApiProperty() onHand!: number;
  @ApiProperty() reserved!: number;
  @ApiProperty() available!: number;
}

const TX_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export class TccTransactionDto {
  @ApiProperty({ pattern: TX_ID.source })
  @IsString()
  @Matches(TX_ID, { message: 'transactionId must be 1-128 characters of [A-Za-z0-9_.:-]' })
  transactionId!: string;
}

export class TccTryDto extends TccTransactionDto {
  @ApiProperty({ type: [LineDto], minItems: 1, maxItems: 50 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ArrayUnique((l: LineDto) => l?.sku, { message: 'each SKU may appear at most once' })
  @ValidateNested({ each: true })
  @Type(() => LineDto)
  items!: LineDto[];
}

export class TccStatusDto {
  @ApiProperty({ enum: ['RESERVED', 'CONFIRMED', 'CANCELED'] }) status!: string;
}
