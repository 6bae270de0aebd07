import { Injectable } from '@nestjs/common';
import { Db, statement } from '../../database/db.js';
import type { LocationView, PutLocationBody } from './locations.schemas.js';

const SQL = {
  put: statement(
    'locations_put',
    `INSERT INTO locations (id, name, priority, active) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET name = $2, priority = $3, active = $4, updated_at = now()
     RETURNING id, name, priority, active`,
  ),
  list: statement('locations_list', `SELECT id, name, priority, active FROM locations ORDER BY priority, id COLLATE "C"`),
} as const;

/**
 * Where stock is kept (warehouses, stores). `default` always exists (migration 1763850000000). There
 * is no delete: a location stops taking part in allocation when it is made inactive, and what it
 * holds stays until confirmed or released.
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
