// Types of check-docs.mjs (a plain module, so that `node scripts/check-docs.mjs` runs it as it is).
export interface Problem {
  /** The Markdown file, relative to the root. */
  file: string
  /** Its line (a block's problem: the Markdown line it comes from); 0 when no line applies. */
  line: number
  message: string
}
/** README.md, CHANGELOG.md and every .md under docs/, relative to `root`. */
export declare function markdownFiles(root?: string): string[]
/** GitHub's anchor for a heading. */
export declare function slug(heading: string): string
/** The anchors of a Markdown text's headings. */
export declare function anchors(text: string): Set<string>
/** Relative links and images of `files` that do not resolve, or whose #anchor names no heading. */
export declare function checkLinks(root: string, files: string[]): Problem[]
/** The ```ts blocks of a Markdown text. */
export declare function tsBlocks(text: string): { line: number; code: string }[]
/** Compiles every ```ts block of `files` as its own module inside `root`. */
export declare function checkBlocks(root: string, files: string[], options?: { prelude?: string }): { problems: Problem[]; blocks: number }
