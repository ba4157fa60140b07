export * from './rest-engine.ts';
export {
  describeRestSettings,
  type RestSettings,
  restSchemaPath,
  restSettingsSpec,
  validateRestDocument,
} from './config/index.ts';
