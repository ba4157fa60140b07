/**
 * The interface of the data-mapping language (Event Script `LHS -> RHS` lines).
 *
 * compileMapping(line, where) parses one line once, at flow compile time, into an immutable
 * CompiledMapping (or throws FlowValidationError with Mercury's message). applyMappings(list,
 * scope) runs a task's compiled lines top to bottom against one MappingScope: reads come from
 * `input`, `model`, `error`, `result`, `header`, `status`; writes go to `model` (in place, visible to
 * the next line at once) and to the scope's mutable targets (`body`/`headers` for an input mapping,
 * `output`/`setDecision` for an output mapping). Errors raised while applying (plugin failure, bad
 * index, reserved dynamic target, ...) are thrown as AppException(status, message) from
 * @gatehouse/functions: the runner aborts the flow with that status (Mercury §10.4).
 */

import type { MappingHooks } from './mapping-hooks.ts';
import type { MappingKind } from './mapping-kind.ts';
import type { Source } from './mapping-source.ts';
import type { Target } from './mapping-target.ts';

export type { MappingHooks } from './mapping-hooks.ts';
export type { MappingKind } from './mapping-kind.ts';

/** Where a line comes from: used for messages and for the kind's own rules. */
export interface MappingLocation {
  readonly flow: string;
  readonly task?: string;
  readonly kind: MappingKind;
  /** The flow file's name, for Mercury's messages (defaults to the flow id). */
  readonly file?: string;
  /** Output mappings of a decision task may target `decision`. */
  readonly decisionTask?: boolean;
}

export interface MappingScope {
  /** The flow instance's input dataset (`input.*`), in input and output mappings alike. */
  readonly input: unknown;
  /**
   * The instance's state machine (`model.*`), written in place. The runner puts the reserved keys
   * in it (instance, cid, ttl, flow, trace) and `parent` = `root` = the root flow's shared map.
   */
  readonly model: Record<string, unknown>;
  /** Handler runs (input mapping): `error.*` = {task, code, message, stack?}. */
  readonly error?: Record<string, unknown>;
  /** Output mapping: the function's returned body (`result`, `result.*`). */
  readonly result?: unknown;
  /** Output mapping: the function's returned headers (`header`, `header.<name>`). */
  readonly header?: Record<string, string>;
  /** Output mapping: the function's returned status (`status`; 200 when it set none). */
  readonly status?: number;
  /** Dynamic fork branch: `<source>.ITEM` / `<source>.INDEX` in the branch's input mapping. */
  readonly forkItem?: { readonly source: string; readonly item: unknown; readonly index: number };

  /** Input mapping target: the function's input body, starts `{}`; `*` may replace it by any value. */
  body: unknown;
  /** Input mapping target: the function's event headers (`header`, `header.<name>`). */
  headers: Record<string, string>;
  /** Output mapping target: the `output.*` working set ({status?, header?, body?}). */
  output: Record<string, unknown>;
  /** Output mapping target: `decision`. Not called when no line maps it. */
  setDecision?: (value: unknown) => void;

  readonly hooks?: MappingHooks;
}

/** One parsed mapping line. Opaque to the runner: pass it to applyMappings. */
export interface CompiledMapping {
  /** The line as written in the flow file. */
  readonly text: string;
  readonly kind: MappingKind;
  /** The 2-part rules the line became (a 3-part line gives two), after the deprecated-syntax rewrite. */
  readonly rules: readonly MappingRule[];
  /** Mercury's load-time WARN lines for this line (deprecated syntax, input namespace on the right). */
  readonly warnings: readonly string[];
  /** A rule targets `ext:<key>` (the flow then needs external.state.machine). */
  readonly usesExternal: boolean;
  /** A rule Mercury counts as incomplete (a side ending in `.`, a target ending in `:`): refuses the flow. */
  readonly incomplete: boolean;
  /** A rule reads or writes `model.parent.` / `model.root.` (the root flow's shared map). */
  readonly touchesParent: boolean;
}

/** One `LHS -> RHS` rule, parsed (see mapping-source.ts and mapping-target.ts). */
export interface MappingRule {
  readonly text: string;
  readonly lhsText: string;
  readonly rhsText: string;
  /** The side holds `{model.x}` or `[...]` parts resolved per run (then re-parsed when they change it). */
  readonly lhsDynamic: boolean;
  readonly rhsDynamic: boolean;
  /** A path/plugin/`$` read (its null rules differ from a constant's). */
  readonly lhsIsLookup: boolean;
  readonly source: Source;
  readonly target: Target;
}
