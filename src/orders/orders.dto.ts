import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsOptional, IsString, Length, ValidateNested } from 'class-validator';
import { LineDto as OrderLineDto } from '../inventory/inventory.dto.js';
import { ORDER_STATUSES } from './order-state.js';

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
