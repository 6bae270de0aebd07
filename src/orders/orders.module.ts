import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { CancelService } from './cancel/cancel.service.js';
import { HoldRelease } from './cancel/hold-release.js';
import { RefundService } from './cancel/refund.service.js';
import { ReservationExpiry } from './cancel/reservation-expiry.js';
import { Captures } from './confirm/capture.js';
import { ConfirmClaims } from './confirm/claims.js';
import { ConfirmService } from './confirm/confirm.service.js';
import { DueOrders } from './due-orders.js';
import { OrderAnswers } from './order-answers.js';
import { OrdersController } from './orders.controller.js';
import { OrderStore } from './state/order-store.js';
import { Authorizations } from './try/authorization.js';
import { TryEngine } from './try/try-engine.js';

/**
 * The coordinator: Try (try/), Confirm (confirm/), Cancel with expiry and refunds (cancel/), on
 * one order state (state/). Its OrderScheduler port is provided by jobs/ (scheduling.module.ts),
 * which this module does not import. Exports what the operator API, the jobs and the sweeper drive.
 */
@Module({})
export class OrdersModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(OrdersModule, config, () => ({
      imports: [MetricsModule, PaymentsModule],
      controllers: config.runsHttp ? [OrdersController] : [],
      providers: [TryEngine, Authorizations, OrderStore, ConfirmClaims, Captures, ConfirmService, CancelService, ReservationExpiry, HoldRelease, RefundService, DueOrders, OrderAnswers],
      exports: [OrderStore, ConfirmService, CancelService, RefundService, DueOrders],
    }));
  }
}
