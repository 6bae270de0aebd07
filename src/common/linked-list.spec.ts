import { LinkedList } from './linked-list.js';

function drain<T extends NonNullable<unknown>>(list: LinkedList<T>): T[] {
  const out: T[] = [];
  for (let v = list.shift(); v !== undefined; v = list.shift()) out.push(v);
  return out;
}

describe('LinkedList', () => {
  it('keeps arrival order and removes any node, head, middle or tail, once', () => {
    const list = new LinkedList<string>();
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((v) => list.push(v));
    expect(list.remove(nodes[2])).toBe(true); // middle
    expect(list.remove(nodes[0])).toBe(true); // head
    expect(list.remove(nodes[4])).toBe(true); // tail
    expect(list.remove(nodes[2])).toBe(false); // already out
    expect(list.first).toBe('b');
    list.push('f');
    expect(drain(list)).toEqual(['b', 'd', 'f']);
    expect(list.empty).toBe(true);
    expect(list.first).toBeUndefined();
    expect(list.shift()).toBeUndefined();
  });

  it('lets go of a removed value and of its neighbours', () => {
    const list = new LinkedList<{ id: number }>();
    const [a, b, c] = [1, 2, 3].map((id) => list.push({ id }));
    list.remove(b);
    expect(b).toEqual({ value: undefined, prev: undefined, next: undefined });
    expect(a.next).toBe(c);
    expect(c.prev).toBe(a);
    expect(list.shift()).toEqual({ id: 1 });
    expect(a.value).toBeUndefined();
    expect(list.remove(a)).toBe(false); // shifted already
  });

  it('empties and fills again', () => {
    const list = new LinkedList<number>();
    const only = list.push(1);
    list.remove(only);
    expect(list.empty).toBe(true);
    list.push(2);
    list.push(3);
    expect(drain(list)).toEqual([2, 3]);
  });
});
