import { randomBytes, randomUUID } from 'node:crypto';
import { Answer } from './support/http.js';
import { useHarness } from './support/harness.js';

/** The inventory as a TCC branch for outside coordinators: the barrier over /tcc/inventory/*. */
const h = useHarness({});


type Stock = { onHand: number; reserved: number; available: number };
const tcc = (op: 'try' | 'confirm' | 'cancel', body: unknown) => h.api.send('POST', `/tcc/inventory/${op}`, { body, admin: true });
const tryTx = (transactionId: string, sku: string, quantity: number) => tcc('try', { transactionId, items: [{ sku, quantity }] });
/** What a caller switches on: the branch status on success, the problem's code otherwise. */
const answer = (res: Answer) => ({ status: res.status, body: res.status < 300 ? res.body?.status : res.body?.code });
const ok = (status: string) => ({ status: 200, body: status });
const refused = (code: string) => ({ status: 409, body: code });

async function newSku(onHand: number): Promise<string> {
  const sku = `P-${randomBytes(4).toString('hex')}`;
  expect((await h.api.putSku(sku, onHand)).status).toBe(200);
  return sku;
}

async function stock(sku: string): Promise<Stock> {
  const res = await h.api.get(`/inventory/${sku}`);
  expect(res.status).toBe(200);
  return { onHand: res.body.onHand, reserved: res.body.reserved, available: res.body.available };
}
const levels = (onHand: number, reserved: number): Stock => ({ onHand, reserved, available: onHand - reserved });

describe('Try', () => {
  it('reserves the stock and answers RESERVED', async () => {
    const sku = await newSku(10);
    expect(answer(await tryTx(randomUUID(), sku, 4))).toEqual(ok('RESERVED'));
    expect(await stock(sku)).toEqual(levels(10, 4));
  });

  it('reserves every line of a multi-line Try, or none of them', async () => {
    const [a, b] = [await newSku(10), await newSku(1)];
    const items = [{ sku: a, quantity: 3 }, { sku: b, quantity: 2 }];
    expect(answer(await tcc('try', { transactionId: randomUUID(), items }))).toEqual(refused('INSUFFICIENT_STOCK'));
    expect(await stock(a)).toEqual(levels(10, 0));
    expect(await stock(b)).toEqual(levels(1, 0));
    expect(answer(await tcc('try', { transactionId: randomUUID(), items: [items[0], { sku: b, quantity: 1 }] }))).toEqual(ok('RESERVED'));
    expect(await stock(a)).toEqual(levels(10, 3));
    expect(await stock(b)).toEqual(levels(1, 1));
  });

  it('does nothing when repeated, even with other items, and answers the current status', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    expect(answer(await tryTx(tx, sku, 4))).toEqual(ok('RESERVED'));
    expect(answer(await tryTx(tx, sku, 4))).toEqual(ok('RESERVED'));
    // "its items are not looked at again": a repeat naming more than is available still answers RESERVED.
    expect(answer(await tryTx(tx, sku, 100))).toEqual(ok('RESERVED'));
    expect(await stock(sku)).toEqual(levels(10, 4));
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(ok('CONFIRMED'));
    expect(answer(await tryTx(tx, sku, 4))).toEqual(ok('CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(6, 0));
  });

  it('leaves no barrier when refused INSUFFICIENT_STOCK: the same transaction succeeds after a restock', async () => {
    const sku = await newSku(2);
    const tx = randomUUID();
    const short = await tryTx(tx, sku, 5);
    expect(answer(short)).toEqual(refused('INSUFFICIENT_STOCK'));
    expect(short.body).toMatchObject({ sku, requested: 5, available: 2 });
    expect(await stock(sku)).toEqual(levels(2, 0));
    expect((await h.api.putSku(sku, 10)).status).toBe(200);
    expect(answer(await tryTx(tx, sku, 5))).toEqual(ok('RESERVED'));
    expect(await stock(sku)).toEqual(levels(10, 5));
  });

  it('leaves no barrier when refused UNKNOWN_SKU', async () => {
    const sku = await newSku(5);
    const tx = randomUUID();
    expect((await tcc('try', { transactionId: tx, items: [{ sku: `P-NOPE-${randomUUID()}`, quantity: 1 }] })).status).toBe(409);
    expect(answer(await tryTx(tx, sku, 1))).toEqual(ok('RESERVED'));
    expect(await stock(sku)).toEqual(levels(5, 1));
  });
});

describe('Confirm', () => {
  it('commits the reservation: onHand falls, reserved is freed', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    await tryTx(tx, sku, 3);
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(ok('CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(7, 0));
  });

  it('is idempotent: a duplicate Confirm answers CONFIRMED and moves nothing', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    await tryTx(tx, sku, 3);
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(ok('CONFIRMED'));
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(ok('CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(7, 0));
  });

  it('refuses Cancel after Confirm with TRANSACTION_CONFIRMED', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    await tryTx(tx, sku, 3);
    await tcc('confirm', { transactionId: tx });
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(refused('TRANSACTION_CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(7, 0));
  });

  it('refuses Cancel after Confirm without touching what other transactions hold on the SKU', async () => {
    const sku = await newSku(10);
    await tryTx(randomUUID(), sku, 4);
    const tx = randomUUID();
    await tryTx(tx, sku, 3);
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(ok('CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(7, 4));
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(refused('TRANSACTION_CONFIRMED'));
    expect(await stock(sku)).toEqual(levels(7, 4));
  });

  it('refuses Confirm before any Try with NO_RESERVATION, and a later Try still works', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(refused('NO_RESERVATION'));
    expect(await stock(sku)).toEqual(levels(10, 0));
    expect(answer(await tryTx(tx, sku, 2))).toEqual(ok('RESERVED'));
    expect(await stock(sku)).toEqual(levels(10, 2));
  });
});

describe('Cancel', () => {
  it('releases a reservation', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    await tryTx(tx, sku, 4);
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(ok('CANCELED'));
    expect(await stock(sku)).toEqual(levels(10, 0));
  });

  it('is idempotent: a duplicate Cancel answers CANCELED and releases only once', async () => {
    const sku = await newSku(10);
    const other = randomUUID();
    await tryTx(other, sku, 3); // held by another transaction: a second release would eat into it
    const tx = randomUUID();
    await tryTx(tx, sku, 4);
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(ok('CANCELED'));
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(ok('CANCELED'));
    expect(await stock(sku)).toEqual(levels(10, 3));
  });

  it('before any Try is an empty rollback, and the late Try is refused (anti-hanging)', async () => {
    const sku = await newSku(10);
    const other = randomUUID();
    await tryTx(other, sku, 3);
    const tx = randomUUID();
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(ok('CANCELED'));
    expect(await stock(sku)).toEqual(levels(10, 3));
    expect(answer(await tryTx(tx, sku, 2))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(answer(await tcc('cancel', { transactionId: tx }))).toEqual(ok('CANCELED'));
    expect(await stock(sku)).toEqual(levels(10, 3));
  });

  it('refuses Try and Confirm after a Cancel of a reserved transaction', async () => {
    const sku = await newSku(10);
    const tx = randomUUID();
    await tryTx(tx, sku, 4);
    await tcc('cancel', { transactionId: tx });
    expect(answer(await tryTx(tx, sku, 4))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(answer(await tcc('confirm', { transactionId: tx }))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(await stock(sku)).toEqual(levels(10, 0));
  });
});

describe('concurrency', () => {
  it('20 concurrent Cancels of one reserved transaction all answer CANCELED and release once', async () => {
    const sku = await newSku(50);
    await tryTx(randomUUID(), sku, 5);
    const tx = randomUUID();
    await tryTx(tx, sku, 10);
    expect(await stock(sku)).toEqual(levels(50, 15));
    const answers = await Promise.all(Array.from({ length: 20 }, () => tcc('cancel', { transactionId: tx })));
    expect(answers.map(answer)).toEqual(Array.from({ length: 20 }, () => ok('CANCELED')));
    expect(await stock(sku)).toEqual(levels(50, 5));
  });

  it('concurrent Try and Cancel of one transaction never leave stock held by a canceled branch', async () => {
    for (let round = 0; round < 10; round++) {
      const sku = await newSku(10);
      const tx = randomUUID();
      const [t, c] = await Promise.all([tryTx(tx, sku, 3), tcc('cancel', { transactionId: tx })]);
      expect(answer(c)).toEqual(ok('CANCELED'));
      expect([ok('RESERVED'), refused('TRANSACTION_CANCELED')]).toContainEqual(answer(t));
      // Either way the branch ends canceled, so nothing may stay reserved.
      expect(await stock(sku)).toEqual(levels(10, 0));
      expect(answer(await tryTx(tx, sku, 3))).toEqual(refused('TRANSACTION_CANCELED'));
    }
  });

  it('concurrent Confirm and Cancel of one transaction: exactly one wins, stock is sold or released', async () => {
    for (let round = 0; round < 10; round++) {
      const sku = await newSku(10);
      const tx = randomUUID();
      expect(answer(await tryTx(tx, sku, 3))).toEqual(ok('RESERVED'));
      const [conf, canc] = await Promise.all([tcc('confirm', { transactionId: tx }), tcc('cancel', { transactionId: tx })]);
      const pair = [answer(conf), answer(canc)];
      const confirmWon = [ok('CONFIRMED'), refused('TRANSACTION_CONFIRMED')];
      const cancelWon = [refused('TRANSACTION_CANCELED'), ok('CANCELED')];
      expect([confirmWon, cancelWon]).toContainEqual(pair);
      const won = pair[0].status === 200 ? 'confirm' : 'cancel';
      expect(await stock(sku)).toEqual(won === 'confirm' ? levels(7, 0) : levels(10, 0));
      // The loser's verdict is final: repeating both calls answers the same.
      expect([answer(await tcc('confirm', { transactionId: tx })), answer(await tcc('cancel', { transactionId: tx }))]).toEqual(pair);
    }
  });

  it('concurrent Tries of different transactions on a hot SKU never oversell', async () => {
    const sku = await newSku(10);
    const answers = await Promise.all(Array.from({ length: 25 }, () => tryTx(randomUUID(), sku, 1)));
    const reserved = answers.filter((a) => a.status === 200).length;
    expect(reserved).toBe(10);
    expect(answers.filter((a) => a.status !== 200).map(answer)).toEqual(Array.from({ length: 15 }, () => refused('INSUFFICIENT_STOCK')));
    expect(await stock(sku)).toEqual(levels(10, 10));
  });
});

describe('the deadline', () => {
  it('a Confirm after the deadline, before the expiry has run, answers TRANSACTION_CANCELED and releases the stock', async () => {
    const sku = await newSku(5);
    const transactionId = `late-${randomUUID()}`;
    expect(answer(await tcc('try', { transactionId, items: [{ sku, quantity: 2 }], timeoutMs: 60_000 }))).toEqual(ok('RESERVED'));
    // The deadline passes; its job (a minute away) and the sweeper have not come yet.
    await h.db.query(`UPDATE participant_branches SET expires_at = now() - interval '1 second' WHERE transaction_id = $1`, [`ext:${transactionId}`]);
    expect(answer(await tcc('confirm', { transactionId }))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(await stock(sku)).toEqual(levels(5, 0));
    expect(answer(await tcc('confirm', { transactionId }))).toEqual(refused('TRANSACTION_CANCELED'));
    expect(answer(await tcc('cancel', { transactionId }))).toEqual(ok('CANCELED'));
    expect(await stock(sku)).toEqual(levels(5, 0));
  });
});

it('leaves the stock invariant intact', async () => {
  const [row] = await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM stock WHERE reserved < 0 OR reserved > on_hand');
  expect(row.n).toBe('0');
});
