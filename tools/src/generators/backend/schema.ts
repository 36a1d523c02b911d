/** The options of `nx g @kube-proxy/tools:backend` (schema.json is the source of truth for Nx). */
export interface BackendGeneratorSchema {
  /** The proxy mode name: the plugin's `name`, and the library's `backend-NAME`. */
  readonly name: string;
}
