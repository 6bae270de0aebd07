import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { CatalogueController } from './catalogue/catalogue.controller.js';
import { CatalogueService } from './catalogue/catalogue.service.js';
import { InventoryController } from './inventory.controller.js';
import { InventoryService } from './inventory.service.js';
import { LedgerController } from './ledger/ledger.controller.js';
import { LedgerService } from './ledger/ledger.service.js';
import { LocationsController } from './locations/locations.controller.js';
import { LocationsService } from './locations/locations.service.js';
import { ParticipantController } from './participant/participant.controller.js';
import { ParticipantService } from './participant/participant.service.js';

/**
 * Stock (SKUs, their stock per location, the locations) and the inventory as a TCC participant for outside coordinators. Its
 * BranchScheduler port is provided by jobs/ (scheduling.module.ts), which this module does not import.
 */
@Module({})
export class InventoryModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(InventoryModule, config, () => ({
      imports: [MetricsModule],
      controllers: config.runsHttp ? [CatalogueController, InventoryController, LedgerController, LocationsController, ParticipantController] : [],
      providers: [InventoryService, LocationsService, LedgerService, CatalogueService, ParticipantService],
      exports: [ParticipantService],
    }));
  }
}
