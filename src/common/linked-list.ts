/**
 * A doubly linked list whose caller keeps each entry's node: adding and removing are O(1), and a
 * removed node lets go of its value at once.
 *
 * For short-lived entries in a long-lived collection (calls in flight, pending timers), where a
 * Set or Map is the obvious choice and the wrong one: V8 (Node 24) promotes the entries deleted
 * from a Set or Map that lives in the old generation, with everything they reference. A call's
 * closure holds its request, its answer and its promise, so finished calls went to the old
 * generation for a mark-compact to free (src/payments/gateway.http.ts, BENCHMARKS.md "Lessons").
 * The same entries in this list are not promoted.
 */
export interface ListNode<T> {
  value: T | undefined;
  prev: ListNode<T> | undefined;
  next: ListNode<T> | undefined;
}

/** Values must not be undefined: a node whose value is undefined is out of the list. */
export class LinkedList<T extends NonNullable<unknown>> {
  private head: ListNode<T> | undefined;
  private tail: ListNode<T> | undefined;

  /** The oldest value still in the list. */
  get first(): T | undefined {
    return this.head?.value;
  }

  get empty(): boolean {
    return this.head === undefined;
  }

  /** Appends a value; keep the node to remove it. */
  push(value: T): ListNode<T> {
    const node: ListNode<T> = { value, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    return node;
  }

  /** Takes a node out and drops its value; false when it was already out. */
  remove(node: ListNode<T>): boolean {
    if (node.value === undefined) return false;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = node.value = undefined;
    return true;
  }

  /** Removes and returns the oldest value. */
  shift(): T | undefined {
    const node = this.head;
    if (!node) return undefined;
    const value = node.value;
    this.remove(node);
    return value;
  }
}
