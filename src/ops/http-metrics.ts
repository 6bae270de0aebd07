import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service.js';

/** Latency by route template (/orders/:id, never the raw path: ids would explode cardinality). */
export function httpMetrics(metrics: MetricsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl ?? ''}${req.route.path}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
