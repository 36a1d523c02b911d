/** Labels that exclude an object from this proxy, as upstream's informer label selector does. */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

/**
 * Upstream lists Services and EndpointSlices with the selector
 * `!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless`. With
 * --service-proxy-name=NAME (ours) the proxy instead serves exactly the objects labelled with NAME.
 */
export function isServedByThisProxy(labels: Readonly<Record<string, string>> | undefined, serviceProxyName: string): boolean {
  const l = labels ?? {};
  if (HEADLESS_LABEL in l) return false;
  if (serviceProxyName === '') return !(SERVICE_PROXY_NAME_LABEL in l);
  return l[SERVICE_PROXY_NAME_LABEL] === serviceProxyName;
}

/** The label selector string for the API server, equivalent to isServedByThisProxy. */
export function proxyLabelSelector(serviceProxyName: string): string {
  return serviceProxyName === ''
    ? `!${SERVICE_PROXY_NAME_LABEL},!${HEADLESS_LABEL}`
    : `${SERVICE_PROXY_NAME_LABEL}=${serviceProxyName},!${HEADLESS_LABEL}`;
}
