/*
 * The API source's startup errors, in a module of their own so that the CLI can tell them apart
 * without loading @kubernetes/client-node (~0.6 s of startup) when it runs from --manifests.
 */

/** The client configuration cannot be built; the message says what to give instead. */
export class KubeClientConfigError extends Error {
  override readonly name = 'KubeClientConfigError';
}

/** The Node could not be used within the wait and the configuration cannot do without it. */
export class NodeWaitError extends Error {
  override readonly name = 'NodeWaitError';
}
