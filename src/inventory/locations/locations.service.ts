import { Injectable } from '@nestjs/common';
import { Db, statement } from '../../database/db.js';
import type { LocationView, PutLocationBody } from './locations.schemas.js';

const SQL = {
  // Low stock is judged again for the SKUs held there when `active` changes (location-put.sql).
  put: statement('locations_put', `SELECT r_id, r_name, r_priority, r_active FROM tcc_location_put($1, $2, $3, $4)`),
  list: statement('locations_list', `SELECT id, name, priority, active FROM locations ORDER BY priority, id COLLATE "C"`),
} as const;

/** A row of tcc_location_put (location-put.sql): the location as it is now. */
export interface LocationPutRow {
  r_id: string;
  r_name: string;
  r_priority: number;
  r_active: boolean;
}

/**
 * Where stock is kept (warehouses, stores). `default` always exists (migration 1763850000000). There
 * is no delete: a location stops taking part in allocation when it is made inactive, and what it
 * holds stays until confirmed or released. Switching one on or off moves its SKUs' available, so
 * low stock is judged again for them (tcc_location_put, location-put.sql).
 */
@Injectable()
export class LocationsService {
  constructor(private readonly db: Db) {}

  async put(id: string, body: PutLocationBody): Promise<LocationView> {
    const r = (await this.db.sql.one<LocationPutRow>(SQL.put, [id, body.name, body.priority, body.active]))!;
    return { id: r.r_id, name: r.r_name, priority: r.r_priority, active: r.r_active };
  }

  async list(): Promise<LocationView[]> {
    return this.db.read.rows<LocationView>(SQL.list);
  }
}
