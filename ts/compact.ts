// compact(): plan natively, summarize (history and split-turn prefix in parallel), validate, fall back,
// record the summary, then continue or replay. The session changes only in the last, synchronous step.
import { Session, SUMMARY_TOOL_OUTPUT_MAX_CHARS, toModelMessages, type CompactionPlan, type Message, type ModelMessageLike, type PrepareOptions, type SummaryInput, type Usage } from './native.js'
import {
  abortError,
  classifyError,
  InvalidArgumentError,
  InvalidSummaryError,
  isAbortError,
  raceAbort,
  throwIfAborted,
  type ContextfoldError,
} from './errors.js'
import { continueMessage, continueText, replayMessage } from './messages.js'
import {
  buildConversationInstructions,
  buildPrompt,
  buildReplacedPrompt,
  buildTurnPrefixPrompt,
  frameSummary,
  joinTurnContext,
  SYSTEM_PROMPT,
  type ConversationInput,
  unframeSummary,
  type PromptInput,
} from './prompt.js'
import { extractiveSummarizer, extractiveSummary, isExtractive } from './summarizers/extractive.js'
import { traceCompaction, traceSummary, type CompactionTrigger, type Telemetry } from './telemetry.js'
import { cleanAnswer, getTemplate, unknownTemplate, type Template } from './templates.js'
import type {
  CompactOptions,
  CompactionResult,
  RequestSettings,
  Summarizer,
  SummaryInputForm,
  SummaryRequest,
  SummaryResponse,
} from './types.js'

/** How many times a "prompt too long" answer shrinks the transcript and retries. */
export const MAX_PROMPT_TOO_LONG_RETRIES = 3

/** Finish reasons that make an answer unusable (normalized: lower case, `_` → `-`). */
const BAD_FINISH = new Set(['length', 'max-tokens', 'error', 'content-filter', 'tool-calls'])

const running = new WeakSet<Session>()

/**
 * Checks a summarizer's answer and returns the usable summary: non-empty once cleaned (Claude
 * Code's `<analysis>` removed), not cut off (`length`), not an error.
 */
export function validateSummary(res: SummaryResponse | undefined): string {
  if (!res || typeof res.text !== 'string') throw new InvalidSummaryError('the summarizer returned no text')
  const finish = res.finishReason?.toLowerCase().replace(/_/g, '-')
  if (finish && BAD_FINISH.has(finish)) {
    const why = finish === 'length' || finish === 'max-tokens' ? ': it was cut off at the output budget' : ''
    throw new InvalidSummaryError(`the summary is unusable (finish reason "${res.finishReason}")${why}`)
  }
  const text = cleanAnswer(res.text)
  if (!text) throw new InvalidSummaryError('the summary is empty')
  return text
}

function addUsage(a?: Usage, b?: Usage): Usage | undefined {
  if (!a || !b) return a ?? b
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0))
  const out: Usage = { input: a.input + b.input, output: a.output + b.output }
  for (const k of ['reasoning', 'cacheRead', 'cacheWrite', 'total'] as const) {
    const v = sum(a[k], b[k])
    if (v !== undefined) out[k] = v
  }
  return out
}

interface Call {
  kind: 'summary' | 'turn-prefix'
  blocks: readonly string[]
  build: (blocks: readonly string[], omitted: number) => string
  maxOutputTokens: number
}

/** The conversation form of a compaction: the agent's messages plus the instructions (built when first read), and its settings. */
interface Conversation {
  messages: () => ModelMessageLike[]
  /** How many leading messages of `messages()` the provider read in the last request. */
  cached: () => number
  request?: RequestSettings
}

interface Ctx {
  plan: CompactionPlan
  template: Template
  summarizer: Summarizer
  system: string
  signal: AbortSignal
  form: SummaryInputForm
  conversation: Conversation
  tokenizer: SummaryRequest['tokenizer']
  telemetry: Telemetry | undefined
}

/**
 * One summary call; a "prompt too long" answer drops the oldest quarter of the blocks and retries.
 * In the conversation form, a "prompt too long" or unusable answer is asked again as a transcript
 * (which can shrink).
 */
async function call(ctx: Ctx, c: Call): Promise<SummaryResponse & { text: string }> {
  let blocks = c.blocks
  let omitted = 0
  let form = ctx.form
  for (let shrinks = 0; ; ) {
    throwIfAborted(ctx.signal)
    const req: SummaryRequest = {
      system: ctx.system,
      prompt: c.build(blocks, omitted),
      maxOutputTokens: c.maxOutputTokens,
      kind: c.kind,
      plan: ctx.plan,
      template: ctx.template.name,
      input: form,
    }
    if (ctx.tokenizer) req.tokenizer = ctx.tokenizer
    // Only the conversation form carries the agent's messages as they are (secrets included: its
    // model already read them); the transcript form gives the redacted transcript alone.
    if (form === 'conversation') {
      Object.defineProperty(req, 'messages', { get: ctx.conversation.messages, enumerable: true, configurable: true })
      Object.defineProperty(req, 'cachedMessages', { get: ctx.conversation.cached, enumerable: true, configurable: true })
      if (ctx.conversation.request) req.request = ctx.conversation.request
    }
    let res: SummaryResponse
    try {
      const traced = traceSummary(ctx.telemetry, { kind: c.kind, input: form, maxOutputTokens: c.maxOutputTokens }, () => ctx.summarizer(req, ctx.signal))
      res = await raceAbort(traced, ctx.signal)
    } catch (e) {
      if (ctx.signal.aborted) throw e
      const err = classifyError(e)
      if (err.code === 'CF_PROMPT_TOO_LONG' && form === 'conversation') {
        form = 'transcript'
        continue
      }
      if (err.code === 'CF_PROMPT_TOO_LONG' && shrinks++ < MAX_PROMPT_TOO_LONG_RETRIES && blocks.length > 1) {
        const drop = Math.max(1, Math.ceil(blocks.length / 4))
        blocks = blocks.slice(drop)
        omitted += drop
        continue
      }
      throw err
    }
    throwIfAborted(ctx.signal)
    try {
      return { ...res, text: validateSummary(res) }
    } catch (e) {
      // The agent's model, given its tools, may answer the conversation with a tool call: ask it as a transcript.
      if (form !== 'conversation') throw e
      form = 'transcript'
    }
  }
}

/** How many model messages `messages` become (a tool result is a message of its own in the AI SDK's layout). */
function modelMessageCount(messages: readonly Message[]): number {
  if (!messages.length) return 0
  return Session.fromMessages([...messages], { model: { limit: { context: 0 } }, tokenizer: 'estimate' }).toModelMessages().length
}

/** The summary body: one call, or the history and the turn prefix in parallel (pi), joined. */
async function summarize(ctx: Ctx, history: Call, prefix: Call | undefined): Promise<SummaryResponse> {
  const inner = new AbortController()
  const sub: Ctx = { ...ctx, signal: inner.signal }
  const onAbort = () => inner.abort(ctx.signal.reason)
  if (ctx.signal.aborted) onAbort()
  ctx.signal.addEventListener('abort', onAbort, { once: true })
  const failFast = <T>(p: Promise<T>) =>
    p.catch((e: unknown) => {
      inner.abort() // the other call is no longer needed
      throw e
    })
  try {
    const [h, p] = await Promise.all([failFast(call(sub, history)), prefix ? failFast(call(sub, prefix)) : undefined])
    const out: SummaryResponse = { text: p ? joinTurnContext(h.text, p.text) : h.text }
    const usage = addUsage(h.usage, p?.usage)
    if (usage) out.usage = usage
    if (h.model) out.model = h.model
    return out
  } finally {
    ctx.signal.removeEventListener('abort', onAbort)
  }
}

function prepareOptions(options: CompactOptions, overflow: boolean): PrepareOptions {
  const prep: PrepareOptions = { auto: options.auto ?? false, overflow }
  if (options.upTo !== undefined) prep.upTo = options.upTo
  if (options.from !== undefined) prep.from = options.from
  if (options.protectFirstTurns !== undefined) prep.protectFirstTurns = options.protectFirstTurns
  if (options.protectSystem !== undefined) prep.protectSystem = options.protectSystem
  return prep
}

/** The rejected user message of an overflow replay, checked. */
function replayTarget(session: Session, id: string, options: CompactOptions): { message: Message; before?: string } {
  if (options.upTo !== undefined || options.from !== undefined) {
    throw new InvalidArgumentError('replay cannot be combined with upTo or from')
  }
  const message = session.get(id)
  if (!message || message.role !== 'user' || message.parts.some((p) => p.type === 'compaction')) {
    throw new InvalidArgumentError(`replay: ${JSON.stringify(id)} is not a user message of the session`)
  }
  const context = session.context()
  const at = context.findIndex((m) => m.id === id)
  if (at < 0) throw new InvalidArgumentError(`replay: message ${JSON.stringify(id)} is not in the context`)
  const before = context[at - 1]?.id
  return before === undefined ? { message } : { message, before }
}

async function prepare(session: Session, prep: PrepareOptions, signal?: AbortSignal, sync = false): Promise<CompactionPlan | null> {
  // A plan made ahead is made synchronously: a pending async prepare keeps the session borrowed,
  // and the agent goes on appending while the summary is written.
  if (sync) return session.prepareCompaction(prep)
  try {
    return await session.prepareCompactionAsync(prep, signal)
  } catch (e) {
    if (isAbortError(e)) throw abortError(signal)
    throw e
  }
}

/**
 * Compacts `session`: summarizes what the native plan says (the history before the verbatim tail,
 * or `upTo` / `from`), records the summary with `applyCompaction`, then appends the auto-continue
 * message (or replays the rejected message). See `CompactOptions` for every option.
 *
 * Auth, network and rate-limit errors report `failed` with the session unchanged; server errors
 * and unusable answers use the extractive summary (`fallback: true`) unless `fallback: false`;
 * "prompt too long" shrinks the transcript and retries. An aborted `signal` rejects with an
 * `AbortError` (`code: 'CF_ABORTED'`) and the session exactly as it was.
 */
export async function compact(session: Session, options: CompactOptions = {}): Promise<CompactionResult> {
  throwIfAborted(options.signal)
  const badTemplate = options.template === undefined ? null : unknownTemplate(options.template)
  if (badTemplate !== null) throw new InvalidArgumentError(`template: ${badTemplate}`)
  const after = async (result: CompactionResult, plan?: CompactionPlan): Promise<CompactionResult> => {
    await options.hooks?.afterCompact?.(result, plan ? { session, plan } : { session })
    return result
  }
  return traceCompaction(options.telemetry, { trigger: triggerOf(options) }, async () => {
    if (running.has(session)) return after(alreadyRunning(session))
    running.add(session)
    try {
      return await run(session, options, after)
    } finally {
      running.delete(session)
    }
  })
}

function alreadyRunning(session: Session): CompactionResult {
  return { status: 'skipped', fallback: false, reason: 'a compaction of this session is already running', tokensBefore: session.usage().tokens }
}

/** Why a compaction runs, for its span: the option, else what `overflow`, `replay` and `auto` say. */
function triggerOf(options: CompactOptions): CompactionTrigger {
  if (options.trigger) return options.trigger
  if (options.overflow || options.replay !== undefined) return 'overflow'
  return options.auto ? 'threshold' : 'manual'
}

/**
 * The conversation form: the agent's last request (or the session's model messages), then one user
 * message with the instructions, which say how many messages at each end stay verbatim.
 */
function conversationOf(
  session: Session,
  plan: CompactionPlan,
  options: CompactOptions,
  promptInput: PromptInput,
  replaced: string | undefined,
  context: string[],
): Conversation {
  let built: { messages: ModelMessageLike[]; cached: number } | undefined
  const build = () => {
    if (built) return built
    const view = session.context()
    const summarized = new Set(plan.summarizedIDs)
    const first = view.findIndex((m) => summarized.has(m.id))
    const tailAt = plan.tailStartID === undefined ? -1 : view.findIndex((m) => m.id === plan.tailStartID)
    const head = first > 0 ? view.slice(0, first).filter((m) => m.role !== 'system') : []
    const { blocks: _b, omitted: _o, ...rest } = promptInput
    const request = options.lastRequest?.messages ?? (session.toModelMessages() as unknown as ModelMessageLike[])
    const sent = cachedFirst(session, view, request, summarized)
    const kept = tailAt < 0 ? [] : view.slice(tailAt, view.length - sent.left)
    const input: ConversationInput = { ...rest, keptTail: modelMessageCount(kept), context }
    const keptHead = modelMessageCount(head)
    if (keptHead) input.keptHead = keptHead
    if (replaced !== undefined) input.replaced = replaced
    const instructions: ModelMessageLike = { role: 'user', content: [{ type: 'text', text: buildConversationInstructions(input) }] }
    built = { messages: [...sent.messages, instructions], cached: sent.cached }
    return built
  }
  const out: Conversation = { messages: () => build().messages, cached: () => build().cached }
  if (options.lastRequest) {
    const { messages: _m, ...request } = options.lastRequest
    if (Object.keys(request).length) out.request = request
  }
  return out
}

/**
 * The request's messages with what the provider has read (the last request) first and unchanged,
 * then what arrived since and is summarized, its tool outputs cut as in the transcript form (the
 * provider reads those at the input price, and a step's output can be longer than the summary).
 * What arrived since and stays verbatim after the summary is left out (`left` view messages): the
 * summary does not cover it, and it would be billed as input for nothing.
 */
function cachedFirst(
  session: Session,
  view: readonly Message[],
  request: readonly ModelMessageLike[],
  summarized: ReadonlySet<string>,
): { messages: ModelMessageLike[]; cached: number; left: number } {
  const last = session.lastRequest()
  // Nothing recorded: the provider has read none of it.
  if (!last) return { messages: [...request], cached: 0, left: 0 }
  if (last.unsent === 0) return { messages: [...request], cached: request.length, left: 0 }
  const unsent = view.slice(view.length - last.unsent)
  const cutOf = (messages: Message[]) =>
    toModelMessages(messages, { toolOutputMaxChars: SUMMARY_TOOL_OUTPUT_MAX_CHARS }) as unknown as ModelMessageLike[]
  const count = cutOf(unsent).length
  if (count === 0 || count >= request.length) return { messages: [...request], cached: 0, left: 0 }
  const cached = request.length - count
  // The kept tail is a suffix of the context: the summarized messages come first.
  const firstKept = unsent.findIndex((m) => !summarized.has(m.id))
  const read = firstKept < 0 ? unsent : unsent.slice(0, firstKept)
  return { messages: [...request.slice(0, cached), ...cutOf(read)], cached, left: unsent.length - read.length }
}

/** A summary written for a plan and not recorded yet. */
export interface Summarized {
  plan: CompactionPlan
  answer: SummaryResponse
  fallback: boolean
  error?: ContextfoldError
  overflow: boolean
  replay?: { message: Message; before?: string }
}

type After = (result: CompactionResult, plan?: CompactionPlan) => Promise<CompactionResult>

async function run(session: Session, options: CompactOptions, after: After): Promise<CompactionResult> {
  const s = await summarizeStage(session, options, after)
  return 'status' in s ? s : after(...record(session, options, s))
}

/**
 * Plans and summarizes without recording: a speculative compaction (`AutoCompactor`'s
 * `speculateAt`) records it later with `recordSummarized`, if the session still starts with what
 * was summarized. A result instead of a summary: nothing to record (skipped, failed).
 */
export function summarizeAhead(session: Session, options: CompactOptions): Promise<Summarized | CompactionResult> {
  return summarizeStage(session, options, async (r) => r, true)
}

/** Records a summary `summarizeAhead` wrote (a compaction of the session then runs no summarizer). */
export function recordSummarized(session: Session, s: Summarized, options: CompactOptions = {}): Promise<CompactionResult> {
  return traceCompaction(options.telemetry, { trigger: triggerOf(options), speculative: true }, async () => {
    if (running.has(session)) return alreadyRunning(session)
    const [result, plan] = record(session, options, s)
    await options.hooks?.afterCompact?.(result, plan ? { session, plan } : { session })
    return result
  })
}

async function summarizeStage(
  session: Session,
  options: CompactOptions,
  after: After,
  syncPrepare = false,
): Promise<Summarized | CompactionResult> {
  const signal = options.signal ?? new AbortController().signal
  const template = getTemplate(options.template ?? 'anchored')
  const overflow = options.overflow ?? options.replay !== undefined
  const auto = options.auto ?? false
  const prep = prepareOptions(options, overflow)

  // Overflow replay: summarize what came before the rejected message, hide it and what followed.
  const replay = options.replay !== undefined ? replayTarget(session, options.replay, options) : undefined
  if (replay) prep.upTo = replay.before ?? replay.message.id
  let plan = await prepare(session, prep, signal, syncPrepare)
  if (!plan && replay && prep.upTo !== replay.message.id) {
    prep.upTo = replay.message.id // nothing new before it: summarize it too, it is replayed anyway
    plan = await prepare(session, prep, signal, syncPrepare)
  }
  throwIfAborted(signal)
  if (!plan) {
    return after({ status: 'skipped', fallback: false, reason: 'nothing to summarize', tokensBefore: session.usage().tokens })
  }
  if (replay) delete plan.tailStartID

  const summarizer = options.summarizer ?? extractiveSummarizer()
  // pi's split turn: the turn's beginning gets its own summary, in parallel. With no history
  // before it (or an extractive summarizer, which reads the plan), one call covers both.
  // The provider rejected the context as too long: the conversation form could not fit either.
  const form: SummaryInputForm = overflow ? 'transcript' : (options.summaryInput ?? 'transcript')
  const split = (p: CompactionPlan) =>
    p.turnPrefix.length > 0 && p.transcript.length > 0 && !isExtractive(summarizer) && form === 'transcript'
  const input = (p: CompactionPlan): PromptInput => {
    const out: PromptInput = {
      template,
      blocks: split(p) ? p.transcript : [...p.transcript, ...p.turnPrefix],
      readFiles: p.readFiles,
      modifiedFiles: p.modifiedFiles,
    }
    if (p.previousSummary) out.previousSummary = unframeSummary(p.previousSummary)
    if (options.focus) out.focus = options.focus
    if (options.instructions) out.instructions = options.instructions
    return out
  }

  let system = SYSTEM_PROMPT
  let replacedPrompt: string | undefined
  let context: string[] = []
  const before = options.hooks?.beforeCompact
  if (before) {
    // The hook sees the default prompt; it may also edit the plan (e.g. drop transcript blocks).
    const hookCtx = { session, plan, template: template.name, system, prompt: buildPrompt(input(plan)), auto, overflow, signal }
    const r = await raceAbort(Promise.resolve(before(hookCtx)), signal)
    throwIfAborted(signal)
    if (r?.cancel) {
      const reason = typeof r.cancel === 'string' && r.cancel ? r.cancel : 'cancelled by the beforeCompact hook'
      return after({ status: 'skipped', fallback: false, reason, tokensBefore: plan.tokensBefore, plan }, plan)
    }
    if (r?.system) system = r.system
    if (r?.prompt) replacedPrompt = r.prompt
    if (r?.context) context = [r.context].flat()
  }

  const promptInput = input(plan)
  const ctx: Ctx = {
    plan,
    template,
    summarizer,
    system,
    signal,
    form,
    conversation: conversationOf(session, plan, options, promptInput, replacedPrompt, context),
    tokenizer: session.options.tokenizer,
    telemetry: options.telemetry,
  }
  // An LLM summarizer reads the conversation as it stands now, not as the agent extends it meanwhile.
  if (form === 'conversation' && !isExtractive(summarizer)) ctx.conversation.messages()
  const history: Call = {
    kind: 'summary',
    blocks: promptInput.blocks,
    maxOutputTokens: plan.summaryBudget,
    build: (blocks, omitted) =>
      replacedPrompt !== undefined
        ? buildReplacedPrompt(replacedPrompt, blocks, omitted, context)
        : buildPrompt({ ...promptInput, blocks, omitted, context }),
  }
  const prefix: Call | undefined = split(plan)
    ? {
        kind: 'turn-prefix',
        blocks: plan.turnPrefix,
        maxOutputTokens: Math.max(1, Math.ceil(plan.summaryBudget / 2)),
        build: (blocks, omitted) => {
          const prefixInput: Parameters<typeof buildTurnPrefixPrompt>[0] = { blocks, omitted, context }
          if (options.focus) prefixInput.focus = options.focus
          if (options.instructions) prefixInput.instructions = options.instructions
          return buildTurnPrefixPrompt(prefixInput)
        },
      }
    : undefined

  let answer: SummaryResponse
  let fallback = false
  let error: ContextfoldError | undefined
  try {
    answer = await summarize(ctx, history, prefix)
  } catch (e) {
    if (signal.aborted) throw abortError(signal)
    error = classifyError(e)
    if (!error.fallbackAllowed || options.fallback === false) {
      return after(
        { status: 'failed', fallback: false, reason: `${error.code}: ${error.message}`, error, tokensBefore: plan.tokensBefore, plan },
        plan,
      )
    }
    answer = { text: extractiveSummary(plan, { template: template.name, tokenizer: session.options.tokenizer }) }
    fallback = true
  }
  throwIfAborted(signal)
  const out: Summarized = { plan, answer, fallback, overflow }
  if (error) out.error = error
  if (replay) out.replay = replay
  return out
}

/** Records a summary: audit, the never-larger check, then the request, the summary and the continue or replayed message. Synchronous. */
function record(session: Session, options: CompactOptions, s: Summarized): [CompactionResult, CompactionPlan] {
  const { plan, answer, fallback, error, overflow, replay } = s
  // Record: nothing above changed the session; from here on everything is synchronous.
  const frame = (body: string) =>
    frameSummary({
      body,
      readFiles: plan.readFiles,
      modifiedFiles: plan.modifiedFiles,
      ...(options.transcriptPath ? { transcriptPath: options.transcriptPath } : {}),
    })
  // The loss audit: facts the summary and the kept messages lost are restored verbatim. Without
  // it, the latest request is still restored: it is always in the context after a compaction.
  const checked = options.audit === false ? { ...plan, keep: plan.keep.filter((f) => f.kind === 'request') } : plan
  const audit = session.auditCompaction(checked, frame(answer.text))
  const text = frame(audit.section ? `${answer.text}\n\n${audit.section}` : answer.text)
  const { section: _section, ...found } = audit

  // A compaction that would not shrink the context is not applied.
  const following = replay ? undefined : options.autoContinue !== false ? continueText(overflow) : undefined
  const preview = session.previewCompaction(plan, text, following)
  if (preview.tokensAfter >= preview.tokensBefore) {
    const skipped: CompactionResult = {
      status: 'skipped',
      code: 'CF_NOT_SMALLER',
      fallback,
      reason: `the compaction would not shrink the context (${preview.tokensBefore} → ${preview.tokensAfter} tokens): not applied`,
      tokensBefore: plan.tokensBefore,
      audit: found,
      plan,
    }
    return [skipped, plan]
  }
  const recorded: SummaryInput = { text, finish: 'stop', audit: found }
  if (answer.usage) recorded.usage = answer.usage
  if (answer.model) recorded.model = answer.model
  // Why the summarizer's answer was not used, kept with the compaction (`contextfold view` shows it).
  const fellBack = error ? `${error.code}: ${error.message}` : undefined
  if (fellBack) recorded.fallback = fellBack
  const appended: Message[] = [...session.applyCompaction(plan, recorded)]
  let next: Message | undefined
  if (replay) next = replayMessage(session, replay.message)
  else if (options.autoContinue !== false) {
    const like = plan.lastUserID !== undefined ? (session.get(plan.lastUserID) ?? undefined) : undefined
    next = continueMessage(session, like ? { overflow, like } : { overflow })
  }
  if (next) {
    session.append(next)
    appended.push(next)
  }

  const result: CompactionResult = {
    status: 'compacted',
    fallback,
    summary: text,
    tokensBefore: plan.tokensBefore,
    tokensAfter: session.usage().tokens,
    messages: appended,
    audit: found,
    plan,
  }
  if (error) {
    result.error = error
    result.reason = `${fellBack} (used the extractive summary)`
  }
  return [result, plan]
}
