import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../../common/errors.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../../http/api-docs.js';
import { LOCATION_ID_PATTERN } from '../../http/schemas.js';
import { BodyPipe } from '../../http/validation.js';
import { LocationList, LocationView, PutLocationBody } from './locations.schemas.js';
import { LocationsService } from './locations.service.js';

const LOCATION = ref('Location', LocationView);

@ApiTags('inventory')
@Controller('admin/locations')
export class LocationsController {
  constructor(private readonly locations: LocationsService) {}

  @Get()
  @ApiOperation({ operationId: 'listLocations', summary: 'Stock locations, by priority then id' })
  @ApiJson(200, ref('LocationList', LocationList))
  @ApiErrors('UNAUTHORIZED')
  async list(): Promise<{ data: LocationView[] }> {
    return { data: await this.locations.list() };
  }

  @Put(':id')
  @ApiOperation({ operationId: 'putLocation', summary: 'Create or replace a stock location' })
  @ApiJsonBody(PutLocationBody)
  @ApiJson(200, LOCATION)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  async put(@Param('id') id: string, @Body(new BodyPipe(PutLocationBody)) body: PutLocationBody): Promise<LocationView> {
    if (!LOCATION_ID_PATTERN.test(id)) throw AppError.validation([{ field: 'id', message: 'a location id must be 1-64 characters of [A-Za-z0-9_.:-]' }]);
    return this.locations.put(id, body);
  }
}
