import type { BackendPlugin } from '@kube-proxy/core';
import { iptablesBackend } from '@kube-proxy/backend-iptables';
import { ipvsBackend } from '@kube-proxy/backend-ipvs';
import { nftablesBackend } from '@kube-proxy/backend-nftables';
import { userspaceBackend } from '@kube-proxy/backend-userspace';

/** The backends shipped with kube-proxy-ts, registered explicitly at startup. */
export const BUILTIN_BACKENDS: readonly BackendPlugin[] = [iptablesBackend, ipvsBackend, nftablesBackend, userspaceBackend];
