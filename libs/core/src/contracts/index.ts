export type {
  EndpointSliceHandler,
  NodeHandler,
  ServiceCIDRHandler,
  ServiceHandler,
  V1EndpointSlice,
  V1Node,
  V1Service,
} from './handlers.js';
export { type Provider, PROVIDER } from './provider.js';
export { PROXY_CONTEXT, type ProxyContext, type TextSink } from './proxy-context.js';
export { writeDryRunBlock } from './dry-run-block.js';
export { BACKEND_PLUGIN_API_VERSION, type BackendPlugin, type DetectResult } from './backend-plugin.js';
export {
  isNoRulesFound,
  type KernelObject,
  type ModeTracer,
  type NoRulesFound,
  type PacketTrace,
  type RuleSnapshot,
  type ServiceAddressHint,
  type TraceEndpointChoice,
  type TraceNode,
  type TracePacket,
  type TraceProtocol,
  type TraceStep,
  type TraceVerdict,
} from './packet-trace.js';
