/**
 * The location every SKU has (API.md, "Locations"; migration 1763850000000 made it): where stock is
 * set when a request names no location, and the one the console shows first. The SQL functions
 * write it out as a literal; src/inventory/locations/default-location.spec.ts holds them to this.
 */
export const DEFAULT_LOCATION = 'default';
