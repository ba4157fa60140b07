export * from './rest-engine.ts';
export { describeRestSettings, type RestSettings, restSettingsSpec } from './rest-settings.ts';
export { restSchemaPath, validateRestDocument } from './rest-schema.ts';
