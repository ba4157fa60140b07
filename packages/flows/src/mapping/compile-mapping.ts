/**
 * compileMapping: one mapping line of a flow file → an immutable CompiledMapping, with Mercury's
 * load-time rules. A line Mercury refuses throws FlowValidationError carrying Mercury's log text
 * (`Skip invalid task ...`): the flow compiler then drops the task, as Mercury does.
 */
import { FlowValidationError } from '../compile/flow-validation-error.ts';
import type { CompiledMapping, MappingKind, MappingLocation, MappingRule } from './compiled-mapping.ts';
import {
  convertSuffixes,
  hasExternalTarget,
  isIncomplete,
  normalizeLine,
  reservedKeyViolation,
  splitRule,
  validInput,
  validOutput,
} from './mapping-syntax.ts';
import { parseConstant, parseLookup, type Source } from './mapping-source.ts';
import { parseTarget } from './mapping-target.ts';

export function compileMapping(line: string, where: MappingLocation): CompiledMapping {
  const task = where.task ?? '';
  const file = where.file ?? where.flow;
  const warnings: string[] = [];
  const rules: MappingRule[] = [];
  for (const normalized of normalizeLine(line)) {
    const rule = convertSuffixes(normalized);
    if (rule !== normalized) {
      warnings.push(
        `Deprecated ${where.kind} syntax in task ${task} of ${file} - '${normalized}' converted to '${rule}'`,
      );
    }
    const valid = where.kind === 'input' ? validInput(rule) : validOutput(rule, where.decisionTask === true);
    if (!valid) {
      throw new FlowValidationError(
        `Skip invalid task ${task} in ${file} that has invalid ${where.kind} mapping - ${rule}`,
        where,
      );
    }
    const [lhs, rhs] = splitRule(rule);
    if (where.kind === 'input' && (rhs.startsWith('input.') || rhs === 'input')) {
      warnings.push(`Task ${task} in ${file} uses input namespace in right-hand-side - ${rule}`);
    }
    const reserved = reservedKeyViolation(rhs);
    if (reserved !== null) {
      throw new FlowValidationError(
        `Skip invalid task (${where.kind}) ${task} in ${file} that overwrites the reserved state-machine key '${reserved}' - ${rule}`,
        where,
      );
    }
    rules.push(parseRule(rule, lhs, rhs, where.kind));
  }
  const texts = rules.map((r) => r.text);
  return Object.freeze({
    text: line,
    kind: where.kind,
    rules: Object.freeze(rules),
    warnings: Object.freeze(warnings),
    usesExternal: texts.some(hasExternalTarget),
    incomplete: texts.some(isIncomplete),
    touchesParent: texts.some((t) => t.includes('model.parent.') || t.includes('model.root.')),
  });
}

function isDynamic(text: string): boolean {
  return /\{[^}]*\}/.test(text) || /\[[^\]]*\]/.test(text);
}

export function parseRule(text: string, lhs: string, rhs: string, kind: MappingKind): MappingRule {
  const { source, lookup } = parseSource(lhs, kind);
  return Object.freeze({
    text,
    lhsText: lhs,
    rhsText: rhs,
    lhsDynamic: isDynamic(lhs),
    rhsDynamic: isDynamic(rhs),
    lhsIsLookup: lookup,
    source,
    target: parseTarget(rhs, kind),
  });
}

const INPUT_LOOKUP_PREFIXES = ['input.', 'model.', 'error.', 'f:', '$'];
const OUTPUT_LOOKUP_PREFIXES = ['input.', 'model.', 'f:', '$', 'header.', 'result.'];
const OUTPUT_LOOKUP_WORDS = ['header', 'status', 'datatype', 'result'];

/** Which LHS forms read the working set (TaskExecutor's "input-like" test) and which are constants. */
export function parseSource(text: string, kind: MappingKind): { source: Source; lookup: boolean } {
  const isInputWord = text.toLowerCase() === 'input';
  const lookup =
    kind === 'input'
      ? isInputWord || text === 'datatype' || INPUT_LOOKUP_PREFIXES.some((p) => text.startsWith(p))
      : isInputWord ||
        OUTPUT_LOOKUP_WORDS.includes(text) ||
        OUTPUT_LOOKUP_PREFIXES.some((p) => text.startsWith(p));
  if (!lookup) return { source: parseConstant(text) ?? { type: 'constant', value: null }, lookup };
  // header names are lower-case in the input dataset: the whole LHS is lower-cased (Mercury)
  const selector = kind === 'input' && text.startsWith('input.header.') ? text.toLowerCase() : text;
  return { source: parseLookup(selector), lookup };
}
