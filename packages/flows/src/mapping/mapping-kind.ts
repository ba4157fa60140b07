/**
 * Which side of a task a mapping line belongs to: its input (the function's input) or its output
 * (the function's result). A file of its own so the parsers of either side can name it without
 * importing the compiled-mapping types that are built from them.
 */
export type MappingKind = 'input' | 'output';
