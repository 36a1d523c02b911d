import type { BackendPlugin, ModeTracer } from '@kube-proxy/core';

export declare const fakeTracer: ModeTracer;
export declare const backend: BackendPlugin & { readonly tracer: ModeTracer };
