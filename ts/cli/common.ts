// What every command shares: its options (window, tokenizer, input format, output mode), the run
// context (colours, progress, abort signal), and reading the input into a native Session.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'

import { InvalidArgumentError, Option, type Command } from 'commander'

import { Session } from '../native.js'
import type { CacheOptions, ModelCost, Overhead, SessionOptions, TokenizerName } from '../native.js'
import { inputError, usageError } from './errors.js'
import { colorsFor, plural, type Colors } from './format.js'
import type { DatabaseFlags } from './database.js'
import { INPUT_FORMATS, loadInput, type InputFormat, type LoadedInput } from './load.js'
import { Progress } from './progress.js'
import { parsePrices, parseTokens, parseTtl, sessionOptions, TOKENIZERS } from './session-options.js'

/** The package's version. */
export function version(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version
  } catch {
    return 'unknown'
  }
}

export interface CommonFlags {
  json?: boolean
  context?: number
  output?: number
  tokenizer?: TokenizerName
  prices?: ModelCost
  cacheTtl?: CacheOptions['ttl']
  format?: InputFormat
  recover?: boolean
  color?: boolean
  progress?: boolean
  /** A file with the system prompt the model gets. */
  system?: string
  /** A JSON file with the tool definitions the model gets. */
  tools?: string
  /** With a database URL: the session id, and where its entries are. */
  session?: string
  schema?: string
  table?: string
  prefix?: string
}

export interface RunContext {
  colors: Colors
  progress: Progress
  json: boolean
  /** Fires on Ctrl-C. */
  signal: AbortSignal
}

/** Commander argument parser for a token count (`30000`, `30k`); `min` is the smallest allowed. */
export function tokensArg(min: number): (value: string) => number {
  return (value: string) => {
    const n = parseTokens(value)
    if (n === undefined) throw new InvalidArgumentError('expected a number of tokens, e.g. 30000 or 30k.')
    if (n < min) throw new InvalidArgumentError(`expected at least ${min}.`)
    return n
  }
}

/** Commander argument parser for a positive integer. */
export function countArg(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer.')
  return n
}

/** The options every command takes. */
export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--json', 'machine-readable output on stdout (nothing on stderr but errors)')
    .option('--context <tokens>', "the model's context window in tokens (default: 200000, or what a session store records)", tokensArg(1))
    .option('--output <tokens>', "the model's maximum output tokens, reserved for the answer (default: 32000, at most a quarter of --context)", tokensArg(0))
    .addOption(new Option('--tokenizer <name>', 'how tokens are counted (default: estimate, or what a session store records)').choices(TOKENIZERS))
    .addOption(new Option('--format <format>', 'read the input as this format instead of detecting it').choices(INPUT_FORMATS))
    .option('--recover', 'session stores: skip corrupt lines (listed as warnings) instead of failing')
    .option('--session <id>', 'with a postgres:// or redis:// URL as input: the session id')
    .option('--schema <name>', 'PostgreSQL: the schema of the sessions table (default: public)')
    .option('--table <name>', 'PostgreSQL: the sessions table (default: contextfold_entries)')
    .option('--prefix <prefix>', 'Redis: the key prefix (default: contextfold:)')
    .option('--no-color', 'no colours (also: NO_COLOR=1)')
    .option('--no-progress', 'no progress display on stderr')
}

/** `--system` / `--tools`: what the model gets besides the messages, counted in the figures. */
export function addOverheadOptions(cmd: Command): Command {
  return cmd
    .option('--system <file>', 'a text file with the system prompt the model gets: counted in the figures, as the provider receives it')
    .option('--tools <file>', 'a JSON file with the tool definitions the model gets (an array of { name, description, inputSchema }): counted in the figures')
}

/** `--prices` and `--cache-ttl`: what requests cost with the provider's prompt cache (`inspect`'s cost lines). */
export function addPriceOptions(cmd: Command): Command {
  return cmd
    .option('--prices <list>', 'USD per million tokens: input,output[,cacheRead[,cacheWrite]] (e.g. 3,15,0.3,3.75); default: the session\'s model prices, else relative ones', (v: string) => {
      const p = parsePrices(v)
      if (!p) throw new InvalidArgumentError('expected 2 to 4 prices >= 0 separated by commas, e.g. 3,15,0.3,3.75.')
      return p
    })
    .option('--cache-ttl <ttl>', "how long the provider keeps a cached prompt: 5m, 1h or milliseconds (default: 5m)", (v: string) => {
      const t = parseTtl(v)
      if (t === undefined) throw new InvalidArgumentError('expected 5m, 1h or a number of milliseconds.')
      return t
    })
}

/** What `--system` / `--tools` name, read; undefined when neither is given. */
async function readOverhead(flags: CommonFlags): Promise<Overhead | undefined> {
  if (flags.system === undefined && flags.tools === undefined) return undefined
  const read = async (option: string, file: string) => {
    try {
      return await readFile(file, 'utf8')
    } catch (e) {
      throw usageError(`${option} ${file}: ${(e as Error).message}`)
    }
  }
  const out: Overhead = {}
  if (flags.system !== undefined) out.system = await read('--system', flags.system)
  if (flags.tools !== undefined) {
    const text = await read('--tools', flags.tools)
    try {
      out.tools = JSON.parse(text)
    } catch (e) {
      throw usageError(`--tools ${flags.tools}: not JSON (${(e as Error).message})`)
    }
  }
  return out
}

export function runContext(flags: CommonFlags, signal: AbortSignal): RunContext {
  const json = flags.json === true
  return {
    json,
    colors: colorsFor(process.stdout, flags.color),
    progress: new Progress(!json && flags.progress !== false),
    signal,
  }
}

/** Where the system prompt or the tool definitions the figures count come from. */
export type OverheadSource = 'transcript' | 'option'

/** What the model gets besides the messages, set on the session, counted as `setOverhead` counts it. */
export interface CallOverhead {
  value: Overhead
  tokens: number
  system: number
  tools: number
  source: { system?: OverheadSource; tools?: OverheadSource }
}

export interface Opened {
  input: LoadedInput
  session: Session
  options: SessionOptions
  /** The system prompt and tools (`--system` / `--tools`, else what the transcript records), set on `session`. */
  overhead?: CallOverhead
}

/** The flags that say where a session in a database is. */
export function databaseFlags(flags: DatabaseFlags): DatabaseFlags {
  const out: DatabaseFlags = {}
  for (const k of ['session', 'schema', 'table', 'prefix'] as const) if (flags[k] !== undefined) out[k] = flags[k]
  return out
}

/** Reads `file` and builds the session the command works on. */
export async function openSession(file: string, flags: CommonFlags, ctx: RunContext): Promise<Opened> {
  ctx.progress.start(`Reading ${file}`)
  const load: Parameters<typeof loadInput>[1] = { signal: ctx.signal }
  if (flags.format !== undefined) load.format = flags.format
  if (flags.recover) load.recover = true
  load.database = databaseFlags(flags)
  const input = await loadInput(file, load)
  const windowFlags: Parameters<typeof sessionOptions>[0] = {}
  if (flags.context !== undefined) windowFlags.context = flags.context
  if (flags.output !== undefined) windowFlags.output = flags.output
  if (flags.tokenizer !== undefined) windowFlags.tokenizer = flags.tokenizer
  if (flags.prices !== undefined) windowFlags.prices = flags.prices
  if (flags.cacheTtl !== undefined) windowFlags.cacheTtl = flags.cacheTtl
  const options = sessionOptions(windowFlags, input.sessionOptions)
  const overhead = await readOverhead(flags)
  ctx.progress.update(`Counting ${plural(input.messages.length, 'message')} of ${file}`)
  let session: Session
  try {
    session = await Session.fromMessagesAsync(input.messages, options, ctx.signal)
  } catch (e) {
    if (ctx.signal.aborted) throw e
    throw inputError(file, e)
  }
  const call = callOverhead(session, overhead, input.overhead)
  return call ? { input, session, options, overhead: call } : { input, session, options }
}

/**
 * Sets on `session` the system prompt and tools the options name, else those the transcript
 * records; counts each as the AI SDK middleware does (`setOverhead`). Undefined when neither says any.
 */
function callOverhead(session: Session, given: Overhead | undefined, recorded: Overhead | undefined): CallOverhead | undefined {
  const pick = <K extends keyof Overhead>(key: K): [Overhead[K], OverheadSource] | undefined =>
    given?.[key] !== undefined ? [given[key], 'option'] : recorded?.[key] !== undefined ? [recorded[key], 'transcript'] : undefined
  const system = pick('system')
  const tools = pick('tools')
  if (!system && !tools) return undefined
  const value: Overhead = {}
  const source: CallOverhead['source'] = {}
  if (system) [value.system, source.system] = system
  if (tools) [value.tools, source.tools] = tools
  const systemTokens = value.system !== undefined ? session.setOverhead({ system: value.system }) : 0
  const tokens = session.setOverhead(value)
  return { value, tokens, system: systemTokens, tools: tokens - systemTokens, source }
}
