import type { EndpointPicker } from './endpoint-picker.js';

/** An open proxy socket, as the proxier sees it. */
export interface ProxySocketHandle {
  readonly port: number;
  /** Stops accepting/receiving; TCP connections already established carry on. */
  close(): void;
}

/** Opens a proxy socket for `protocol` on `port` (0: kernel's choice) serving `picker`'s endpoints. */
export type OpenProxySocket = (protocol: 'TCP' | 'UDP', picker: EndpointPicker, port: number) => Promise<ProxySocketHandle>;
