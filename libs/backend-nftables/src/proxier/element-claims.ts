/**
 * Who wants which element of the shared sets and maps: element (container\0key) → its owners in
 * the order they claimed it; the first owner's element is the one written. Almost every element has
 * one owner (a cluster IP, a node port), so that case is one small record, and only an element two
 * service ports claim (a shared external IP) gets a Map: at 10,000 services a Map per element was
 * 6.6 MB of the running proxy's heap (issue 24).
 */
import type { PlacedElement } from '../render/service-port-render.js';

interface Claim {
  readonly owner: string;
  readonly element: PlacedElement;
}

type Claims = Claim | Map<string, PlacedElement>;

export class ElementClaims {
  private readonly byElement = new Map<string, Claims>();

  get size(): number {
    return this.byElement.size;
  }

  has(ck: string): boolean {
    return this.byElement.has(ck);
  }

  clear(): void {
    this.byElement.clear();
  }

  /** `owner` claims the element (a repeated claim keeps its place and its first element). */
  add(ck: string, owner: string, element: PlacedElement): void {
    const c = this.byElement.get(ck);
    if (c === undefined) this.byElement.set(ck, { owner, element });
    else if (c instanceof Map) {
      if (!c.has(owner)) c.set(owner, element);
    } else if (c.owner !== owner) {
      this.byElement.set(
        ck,
        new Map([
          [c.owner, c.element],
          [owner, element],
        ]),
      );
    }
  }

  /** `owner` lets go of the element; the next owner in claim order, if any, becomes the first. */
  remove(ck: string, owner: string): void {
    const c = this.byElement.get(ck);
    if (c === undefined) return;
    if (!(c instanceof Map)) {
      if (c.owner === owner) this.byElement.delete(ck);
      return;
    }
    c.delete(owner);
    if (c.size === 0) this.byElement.delete(ck);
    else if (c.size === 1) {
      const [only] = c;
      this.byElement.set(ck, { owner: only![0], element: only![1] });
    }
  }

  /** The first owner and its element, or undefined when nobody claims it. */
  first(ck: string): Claim | undefined {
    const c = this.byElement.get(ck);
    if (c === undefined || !(c instanceof Map)) return c;
    const [owner, element] = c.entries().next().value!;
    return { owner, element };
  }
}
