// The configuration: application properties, the settings, rest.yaml read, merged and checked.
export { type AppProperties, loadAppProperties } from './app-properties.ts';
export { loggingReport, type ProblemReport } from './problem-report.ts';
export { resolveLocation, resolveLocations } from './resource-location.ts';
export { type MergedRestConfig, mergeRestFiles, type SourcedEntry } from './rest-config-merge.ts';
export { checkAgainstSchema, restSchemaPath, validateRestDocument } from './rest-schema.ts';
export {
  defaultConfigFolder,
  describeRestSettings,
  loadRestSettings,
  type RestSettings,
  restSettingsSpec,
} from './rest-settings.ts';
export { loadRestFiles } from './rest-yaml-loader.ts';
export { loadOutboundConfig, type OutboundConfig, outboundConfig } from './outbound-config.ts';
