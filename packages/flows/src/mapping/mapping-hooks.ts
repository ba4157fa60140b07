/**
 * The application services a mapping may use (configuration, the external state machine, file
 * folders, warnings). A file of its own because the readers (mapping-source, file-access) need it
 * and the compiled-mapping types need those readers' types: together they would import in a circle.
 */

/** Application-level services a mapping may use; all optional. */
export interface MappingHooks {
  /** `map(config.key)` and `f:setConfig`: the application configuration (Gatehouse properties). */
  readonly config?: (key: string) => unknown;
  /** `ext:<key>` targets: fire-and-forget to the flow's external.state.machine (value null = remove). */
  readonly external?: (key: string, value: unknown) => void;
  /**
   * `classpath(...)` resources: the folder they resolve against (else the working directory), and
   * stay in.
   */
  readonly resourceFolder?: string;
  /**
   * The folders `file(...)` sources and targets may use (flow.file.folders in the REST engine);
   * without any, `file(...)` is refused.
   */
  readonly fileFolders?: readonly string[];
  /** `f:setConfig(key, value)`: set an application property (Mercury sets a Java system property). */
  readonly setConfig?: (key: string, value: string) => void;
  /** Non-fatal problems (Mercury's ERROR/WARN lines, e.g. an invalid output.status). */
  readonly warn?: (message: string) => void;
  /** Largest list index a dynamic `[model.n]` target may use (Mercury's max.model.array.size, 1000). */
  readonly maxModelArraySize?: number;
}
