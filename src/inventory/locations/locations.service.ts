import { Injectable } from '@nestjs/common';
import { Db, statement } from '../../database/db.js';
import type { LocationView, PutLocationBody } from './locations.schemas.js';

const SQL = {
  // Low stock is judged again for the SKUs held there when `active` changes (location-put.sql).
  put: statement('locations_put', `SELECT r_id AS id, r_name AS name, r_priority AS priority, r_active AS active FROM tcc_location_put($1, $2, $3, $4)`),
  list: statement('locations_list', `SELECT id, name, priority, active FROM locations ORDER BY priority, id COLLATE "C"`),
} as const;

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
    return (await this.db.sql.one<LocationView>(SQL.put, [id, body.name, body.priority, body.active]))!;
  }

  async list(): Promise<LocationView[]> {
    return this.db.read.rows<LocationView>(SQL.list);
  }
}
