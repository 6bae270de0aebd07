import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { SKU_PATTERN } from '../common/validation.js';
import { ORDER_STATUSES } from './order-state.js';

export class OrderLineDto {
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

export class CreateOrderDto {
  @ApiProperty({ minLength: 1, maxLength: 128, example: 'c-1' })
  @IsString()
  @Length(1, 128)
  customerId!: string;

  @ApiProperty({ type: [OrderLineDto], minItems: 1, maxItems: 50, description: 'each SKU at most once' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ArrayUnique((l: OrderLineDto) => l?.sku, { message: 'each SKU may appear at most once' })
  @ValidateNested({ each: true })
  @Type(() => OrderLineDto)
  items!: OrderLineDto[];
}

export class ConfirmOrderDto {
  @ApiPropertyOptional({ description: 'passed to the gateway', maxLength: 512 })
  @IsOptional()
  @IsString()
  @Length(1, 512)
  paymentToken?: string;
}

export class OrderItemView {
  @ApiProperty() sku!: string;
  @ApiProperty() quantity!: number;
  @ApiProperty() unitPriceMinor!: number;
}

export class OrderViewDto {
  @ApiProperty() id!: string;
  @ApiProperty() transactionId!: string;
  @ApiProperty() customerId!: string;
  @ApiProperty({ enum: ORDER_STATUSES }) status!: string;
  @ApiProperty({ type: [OrderItemView] }) items!: OrderItemView[];
  @ApiProperty() amountMinor!: number;
  @ApiProperty({ example: 'USD' }) currency!: string;
  @ApiProperty({ format: 'date-time' }) reservationExpiresAt!: string;
  @ApiProperty() confirmAttempts!: number;
  @ApiProperty({ nullable: true, type: String }) paymentId!: string | null;
  @ApiProperty({ nullable: true, type: String }) failureReason!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}
