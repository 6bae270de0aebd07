import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ORDER_STATUSES } from '../orders/order-state.js';

export class ReasonDto {
  @ApiProperty({ minLength: 1, maxLength: 500 })
  @IsString()
  @Length(1, 500)
  reason!: string;
}

export class ListOrdersQuery {
  @ApiPropertyOptional({ enum: ORDER_STATUSES })
  @IsOptional()
  @IsIn(ORDER_STATUSES as unknown as string[], { message: `status must be one of ${ORDER_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @Matches(/^(?:[1-9]\d{0,2}|1000)$/, { message: 'limit must be an integer from 1 to 1000' })
  limit?: string;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @Length(1, 512)
  cursor?: string;
}

export class ReconciliationQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 43200, default: 1440, description: 'look at orders finished in the last N minutes' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,4}$/, { message: 'sinceMinutes must be an integer from 1 to 43200' })
  sinceMinutes?: string;
}
