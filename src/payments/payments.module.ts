import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PaymentGateway } from './payment-gateway.js';

/** The payment gateway behind one circuit breaker: charges, lookups, refunds. */
@Module({
  imports: [MetricsModule],
  providers: [PaymentGateway],
  exports: [PaymentGateway],
})
export class PaymentsModule {}
