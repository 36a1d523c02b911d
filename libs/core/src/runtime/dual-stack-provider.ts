import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { Provider } from '../contracts/provider.js';

/**
 * Two single-family providers behind one (upstream's metaproxier.NewMetaProxier): every handler call
 * goes to both; each proxier filters the objects to its own family.
 */
export class DualStackProvider implements Provider {
  readonly providers: readonly [Provider, Provider];

  constructor(ipv4: Provider, ipv6: Provider) {
    this.providers = [ipv4, ipv6];
  }

  sync(): void {
    for (const p of this.providers) p.sync();
  }

  async syncLoop(): Promise<void> {
    await Promise.all(this.providers.map((p) => p.syncLoop()));
  }

  stop(): void {
    for (const p of this.providers) p.stop();
  }

  /** Resolves when both families have synced once; rejects if either is stopped first. */
  async firstSync(): Promise<void> {
    await Promise.all(this.providers.map((p) => p.firstSync()));
  }

  /** Resolves when both families' deferred work is done. */
  async settled(): Promise<void> {
    await Promise.all(this.providers.map((p) => p.settled?.()));
  }

  onServiceAdd(service: V1Service): void {
    for (const p of this.providers) p.onServiceAdd(service);
  }

  onServiceUpdate(previous: V1Service, current: V1Service): void {
    for (const p of this.providers) p.onServiceUpdate(previous, current);
  }

  onServiceDelete(service: V1Service): void {
    for (const p of this.providers) p.onServiceDelete(service);
  }

  onServicesSynced(): void {
    for (const p of this.providers) p.onServicesSynced();
  }

  onEndpointSliceAdd(slice: V1EndpointSlice): void {
    for (const p of this.providers) p.onEndpointSliceAdd(slice);
  }

  onEndpointSliceUpdate(previous: V1EndpointSlice, current: V1EndpointSlice): void {
    for (const p of this.providers) p.onEndpointSliceUpdate(previous, current);
  }

  onEndpointSliceDelete(slice: V1EndpointSlice): void {
    for (const p of this.providers) p.onEndpointSliceDelete(slice);
  }

  onEndpointSlicesSynced(): void {
    for (const p of this.providers) p.onEndpointSlicesSynced();
  }

  onNodeAdd(node: V1Node): void {
    for (const p of this.providers) p.onNodeAdd(node);
  }

  onNodeUpdate(previous: V1Node, current: V1Node): void {
    for (const p of this.providers) p.onNodeUpdate(previous, current);
  }

  onNodeDelete(node: V1Node): void {
    for (const p of this.providers) p.onNodeDelete(node);
  }

  onNodeSynced(): void {
    for (const p of this.providers) p.onNodeSynced();
  }

  /** Both families get the whole list (each keeps its own), as upstream's metaproxier. */
  onServiceCIDRsChanged(cidrs: readonly string[]): void {
    for (const p of this.providers) p.onServiceCIDRsChanged?.(cidrs);
  }
}
