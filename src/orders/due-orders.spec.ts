import { Logger } from '@nestjs/common';
import type { Db } from '../database/db.js';
import type { ReservationExpiry } from './cancel/reservation-expiry.js';
import type { ConfirmService } from './confirm/confirm.service.js';
import { DueOrders } from './due-orders.js';
import type { Authorizations } from './try/authorization.js';

/** A database whose due query always answers the same full page of 500 orders (none ever leaves). */
function fullPages(): { db: Db; pages: () => number } {
  let pages = 0;
  const page = Array.from({ length: 500 }, (_, i) => ({ id: `o-${i}`, expired_unpaid: i % 2 === 0, authorizing: false }));
  const db = {
    sql: {
      rows: async () => {
        pages += 1;
        if (pages > 50) throw new Error('drive() keeps paging through the same orders');
        return page;
      },
    },
  } as unknown as Db;
  return { db, pages: () => pages };
}

describe('DueOrders.drive', () => {
  // The failure below is logged on purpose; keep it out of the test output (jest gives each file its own modules).
  beforeAll(() => Logger.overrideLogger(false));
  it('ends the run after a page in which an order could not be driven (it would come back in the next page)', async () => {
    const { db, pages } = fullPages();
    const driven: string[] = [];
    const confirm = {
      advance: async (id: string) => {
        if (id === 'o-7') throw new Error('database busy');
        driven.push(id);
      },
    } as unknown as ConfirmService;
    const expiry = { expire: async (id: string) => void driven.push(id) } as unknown as ReservationExpiry;
    const due = new DueOrders(db, confirm, expiry, {} as Authorizations);
    await expect(due.drive(0)).resolves.toBe(499);
    expect(pages()).toBe(1);
    expect(driven).toHaveLength(499);
  });

  it('goes on to the next page while every order of a full page was driven, and stops when told', async () => {
    const { db, pages } = fullPages();
    let calls = 0;
    const confirm = { advance: async () => void (calls += 1) } as unknown as ConfirmService;
    const expiry = { expire: async () => void (calls += 1) } as unknown as ReservationExpiry;
    const due = new DueOrders(db, confirm, expiry, {} as Authorizations);
    await expect(due.drive(0, () => pages() >= 3)).resolves.toBe(1000);
    expect(pages()).toBe(3);
    expect(calls).toBe(1000);
  });

  it('settles an unsettled authorization instead of confirming, and captures when a Confirm waited for it', async () => {
    const rows = [
      { id: 'a', expired_unpaid: false, authorizing: true },
      { id: 'b', expired_unpaid: false, authorizing: true },
      { id: 'c', expired_unpaid: true, authorizing: true },
    ];
    const db = { sql: { rows: async () => rows } } as unknown as Db;
    const calls: string[] = [];
    const confirm = { advance: async (id: string) => void calls.push(`advance ${id}`) } as unknown as ConfirmService;
    const expiry = { expire: async (id: string) => void calls.push(`expire ${id}`) } as unknown as ReservationExpiry;
    const settled = (status: string, payment: string) => ({ status, body: JSON.stringify({ status, payment: { status: payment } }) });
    const authorizations = {
      settle: async (id: string) => {
        calls.push(`settle ${id}`);
        return id === 'a' ? settled('CONFIRM_PENDING', 'authorized') : settled('TRY_SUCCESS', 'authorized');
      },
    } as unknown as Authorizations;
    await new DueOrders(db, confirm, expiry, authorizations).drive(0);
    expect(calls.sort()).toEqual(['advance a', 'expire c', 'settle a', 'settle b']);
  });
});
