// Static content: files from static.html.folder and their types, the static-content section.
export { compileStaticContent, type StaticContentConfig } from './static-content-config.ts';
export { etagMatches, servedPaths, type StaticFile, StaticFolder } from './static-files.ts';
