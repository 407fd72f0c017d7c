// Older-checkout shims for adapter.mts (765052a7d1, ea4c10d753 and their like). adapter.mts is the
// a55f148516 driver; each of its `// LEGACY:` hooks calls into this module, which translates API
// SHAPE only (argument positions, option and event vocabulary, routing, and where the loop composes
// later than the model: a Compose banked until the loop gets there), never behaviour. Every
// feature is detected in the checkout itself (its declared types, or what its runtime objects
// have), never by commit. Where a checkout has no counterpart for an action or option, the adapter
// answers `no-counterpart` (NoCounterpart) instead of faking it.
import { existsSync, readFileSync } from 'node:fs'
import { LlmAdapter } from '@deepseek-ai/dsh-llm'
import * as sessionPkg from '@deepseek-ai/dsh-session'
import BasicCompactService from '@deepseek-ai/dsh-compact-basic'

type Json = any

/** The checkout has no counterpart for an action or option: never faked (used by legacy paths only). */
export class NoCounterpart extends Error {}

// --- feature detection ---
const AGENT_TYPES = 'packages/core/agent/src/types.ts'
/** Whether the checkout's source declares `needle` in `file` (a seam or option with no runtime trace). */
function declares(file: string, needle: string): boolean {
  try { return readFileSync(`${process.env.HARNESS_DIR ?? '.'}/${file}`, 'utf8').includes(needle) } catch { return false }
}
/** The parameter list a seam's declaration in `file` gives, or undefined where the checkout declares no such seam. */
function seamParams(file: string, seam: string): string | undefined {
  try { return new RegExp(`'${seam}'\\(([^)]*)\\)`).exec(readFileSync(`${process.env.HARNESS_DIR ?? '.'}/${file}`, 'utf8'))?.[1] } catch { return undefined }
}
/**
 * Whether the loop composes the session prefix before the step boundary. A checkout whose
 * agent/pre-step seam hands its listeners the system prompt to measure (`fullSystemPrompt`) but not
 * the session prefix declares a prefix composed later, inside the step, after step/start and
 * agent/request (ea4c10d753 and its like); the fix that moved composition before pre-step added the
 * prefix to that seam (765052a7d1), and a55f148516's pre-step takes neither. No session-prefix seam:
 * nothing to compose late.
 */
function composesBeforeStep(): boolean {
  const preStep = seamParams(AGENT_TYPES, 'agent/pre-step')
  if (seamParams(AGENT_TYPES, 'agent/session-prefix') === undefined || preStep === undefined) return true
  return !(preStep.includes('fullSystemPrompt') && !preStep.includes('sessionPrefix'))
}
/** What the checkout has of a55f148516's API: every flag is true there. */
export const HAS = {
  /** LlmAdapter.resolveModel: routing by provider (else by one model name, see encodeModel). */
  providers: 'resolveModel' in LlmAdapter.prototype,
  /** agent/post-step (else PostStep gates at agent/turn-continuation, the next awaited seam). */
  postStep: declares(AGENT_TYPES, "'agent/post-step'("),
  /** agent/turn-stop (else BeginStep, steps >= 2, gates at the end of agent/turn-continuation). */
  turnStop: declares(AGENT_TYPES, "'agent/turn-stop'("),
  /** agent/request-error (else a failed request ends the turn: Reply.retry has no counterpart). */
  requestError: declares(AGENT_TYPES, "'agent/request-error'("),
  /** prompt-submit additionalContexts (else ONE separate additionalContext, no placement, no meta). */
  multiContexts: declares(AGENT_TYPES, 'additionalContexts'),
  /** Scoped<Agent>: agent-scoped tools (else one global ToolRegistry, see setSharedTools). */
  scopedAgents: declares(AGENT_TYPES, 'Scoped<Agent>'),
  /** The registry names its agents (else CreateAgentOptions requires an agentId). */
  namedAgents: !declares('packages/core/agent/src/index.ts', 'agentId: AgentId'),
  /** cancel(cause) (else cancel(reason?: string)). */
  cancelCause: declares(AGENT_TYPES, 'AgentCancelCause'),
  /** inject(content, InjectOptions) defaults to a55f148516's `{kind: 'plugin', plugin: ''}` source. */
  injectOptions: declares(AGENT_TYPES, 'InjectOptions'),
  /** LlmFailure: a finish error carries `failure` (else `{kind: 'error', message, code?}`, no status). */
  llmFailure: declares('packages/llm/llm/src/types.ts', 'LlmFailure'),
  /** compact-basic's summarizer module (frameSummary, the summarize() instruction hook, resolveModel windows). */
  summarizer: existsSync(`${process.env.HARNESS_DIR ?? '.'}/packages/compact/compact-basic/src/summarizer.ts`),
  /** a55f148516's log vocabulary (else context/message, header deltas, no assistant provenance: see eventShape). */
  sourcedLog: !declares('packages/core/session/src/types.ts', "'context/message':"),
  /** The session prefix composed before the step boundary (else a Compose is banked until the loop composes: see bankCompose). */
  prefixBeforeStep: composesBeforeStep(),
}

/** The features the checkout lacks: the adapter runs through their shims (named in `hello`). */
export const MISSING = Object.entries(HAS).filter(([, has]) => !has).map(([name]) => name)
/** Some feature is missing: the adapter runs through its shims. */
export const SHIMMED = MISSING.length > 0

/** The last argument of a seam listener: older seams pass fewer leading arguments (no signal, no prefix). */
export function last<T = Json>(args: Json[]): T { return args[args.length - 1] }

/** A surface node is its seq (a55f148516) or a `{seq, prev, next}` node (older). */
export function seqs(session: Json): number[] { return [...session.surface.nodes].map((n: Json) => typeof n === 'number' ? n : n.seq) }

// --- routing: without providers, `provider/model` is one model name, decoded in everything reported ---
const SEP = '/'
let gate: LlmAdapter | undefined
let ctx: Json
let routes = new Set<string>()
let routed: string[] = [] // the scripted fake's providers
let raised = new Set<string>() // provider failures the scripted provider raised: [message, code]
const cancelledAt = new WeakMap<object, number>() // agent -> turn/start count at its cancel

function encodeModel(provider: string | null | undefined, model: string): string { return provider == null ? model : `${provider}${SEP}${model}` }
function decodeConfig(c: Json): Json {
  if (HAS.providers || c == null || typeof c.model !== 'string' || !c.model.includes(SEP)) return c
  const k = c.model.indexOf(SEP)
  const out: Json = {}
  for (const [key, v] of Object.entries(c)) {
    if (key === 'model') { out.provider = c.model.slice(0, k); out.model = c.model.slice(k + 1) } else out[key] = v
  }
  return out
}
/** Register the scripted fake for each `<provider>/<model>` the case names, of the providers it routes. */
function route(provider: string | null | undefined, model: string | null | undefined): void {
  if (provider == null || !routed.includes(provider) || model == null) return
  const key = encodeModel(provider, model)
  if (routes.has(key)) return
  routes.add(key)
  ctx.llm.registerAdapter([key], gate)
}

/** Per case. With providers the adapter registers its providers itself. */
export function reset(context: Json, mock: LlmAdapter, providers: string[]): void {
  ctx = context; gate = mock; routed = providers; routes = new Set(); raised = new Set(); sharedTools.clear()
}

function noEffort(what: string, x: Json): void {
  if (x?.reasoningEffort != null) throw new NoCounterpart(`reasoningEffort: this checkout's ${what} has no reasoning effort`)
}
/** LlmCallConfig (a Dispatch replacement); checked when the action arrives, so the refusal is its answer. */
export function checkConfig(c: Json): void { if (!HAS.providers) noEffort('LlmCallConfig', c) }
export function configOf(c: Json): Json {
  noEffort('LlmCallConfig', c)
  route(c.provider, c.model)
  const out: Json = { model: encodeModel(c.provider, c.model) }
  for (const k of ['temperature', 'maxTokens', 'stop']) if (c[k] != null) out[k] = c[k]
  return out
}
export function optionsOf(o: Json): Json {
  noEffort('AgentOptions', o)
  route(o.provider, o.model)
  return o.model == null ? {} : { model: encodeModel(o.provider, o.model) }
}

/** A provider failure the scripted provider raises (to tell it from other turn errors in the old shape). */
export function noteFailure(message: string, code: string | undefined): void { raised.add(JSON.stringify([message, code])) }

/** Older checkouts mark no request purpose: a loop request is the deep-frozen one, the summarizer's is its own object. */
export function isLoopRequest(options: Json): boolean { return HAS.providers ? options.purpose === undefined : Object.isFrozen(options) }

// --- event and request vocabulary (older checkouts only; identity on a55f148516 shapes) ---
const fold = (events: Json[]): Json => (sessionPkg as Json).foldRequestHeader(events)

/**
 * An older event in a55f148516's vocabulary. Pure renames and re-encodings of what the log holds:
 * context/message is the sourced user/message; an aborted turn drops the cancel-reason string; the
 * `provider/model` route is decoded; a header delta is the folded header it produces (a 'change'
 * snapshot, as is 'fallback'); an assistant/message's provenance is the route of the header in
 * force; a failure the provider raised is the turn's `failure`.
 */
export function eventShape(e: Json, events: Json[], index: number): Json {
  if (HAS.sourcedLog) return e
  const data: Json = e.data
  switch (e.type) {
    case 'context/message': return { ...e, type: 'user/message' }
    case 'turn/end': {
      const r = data.reason
      if (r.kind === 'aborted') return { ...e, data: { ...data, reason: { kind: 'aborted' } } }
      if (r.kind === 'error' && raised.has(JSON.stringify([r.message, r.code]))) {
        return { ...e, data: { ...data, reason: { kind: 'error', step: r.step, failure: { message: r.message, ...r.code === undefined ? {} : { code: r.code } } } } }
      }
      return e
    }
    case 'request/header':
      return { ...e, data: { ...data, header: { ...data.header, config: decodeConfig(data.header.config) }, ...data.reason === 'fallback' ? { reason: 'change' } : {} } }
    case 'request/header-delta': {
      const header = fold(events.slice(0, index + 1))
      return { type: 'request/header', seq: e.seq, time: e.time, data: { header: { ...header, config: decodeConfig(header.config) }, reason: 'change' } }
    }
    case 'assistant/message': {
      const config = decodeConfig(fold(events.slice(0, index))?.config ?? {})
      const { usage, ...rest } = data
      return { ...e, data: { ...rest, provenance: { provider: config.provider, model: config.model }, ...usage === undefined ? {} : { usage } } }
    }
    default: // compact/* events name the summarizer's route
      return e.type.startsWith('compact/') && typeof data?.model === 'string' ? { ...e, data: decodeConfig(data) } : e
  }
}

/**
 * An older request in a55f148516's vocabulary: the route decoded; context/ and steering/messages
 * unwrapped from their `<context|steering source="…">` envelope; each derived assistant message
 * (after the prefix) given its surface event's provenance, in order (left as is when counts differ).
 */
export function requestShape(request: Json, options: Json, session: Json): Json {
  request = decodeConfig(request)
  if (HAS.sourcedLog || !Array.isArray(request.messages) || session === undefined) return request
  const events: Json[] = session.events
  const bySeq = new Map(events.map((e: Json, i: number) => [e.seq, i]))
  const prefix = fold(events)?.messagePrefix?.length ?? 0
  const surfaced = seqs(session).map(q => bySeq.get(q)!).filter(i => events[i].type === 'assistant/message' && events[i].data.content.length > 0)
  const derived = request.messages.map((m: Json, i: number) => [m, i] as const).filter(([m, i]: Json) => i >= prefix && m.role === 'assistant')
  for (const m of request.messages) {
    const c = m.content
    const open = m.role === 'user' && c.length >= 2 ? /^<(context|steering) source="[^"]*">$/.exec(c[0]?.text ?? '') : null
    if (open !== null && c[c.length - 1]?.text === `</${open[1]}>`) m.content = c.slice(1, -1)
  }
  if (!Object.isFrozen(options) || surfaced.length !== derived.length) return request
  derived.forEach(([m]: Json, k: number) => { m.provenance = eventShape(events[surfaced[k]!], events, surfaced[k]!).data.provenance })
  return request
}

/** The checkpoint framing of no summary: older services frame in their own (private) _frameSummary. */
export function frameNoSummary(): Json[] { return (BasicCompactService.prototype as Json)._frameSummary([]) }

/** The basic service's config: older ones take the window in it (no resolveModel), no retain ratio, no instruction hook. */
export function compactConfig(p: Json): Json {
  route(p.summarizationProvider || null, p.summarizationModel) // a named summarizer's route, as a request's is registered
  return {
    contextWindow: p.contextWindow ?? 1, auto: p.contextWindow != null, thresholdRatio: p.thresholdRatio,
    retainTokens: p.retainTokens ?? Math.floor((p.contextWindow ?? 0) * p.retainRatio),
    summarizationModel: p.summarizationModel === '' ? '' : encodeModel(p.summarizationProvider || null, p.summarizationModel),
    maxTokens: p.maxTokens, compactionRetries: p.compactionRetries,
  }
}

/** compactRegion(start, end, agent, signal); older services take the session first. */
export function compactRegion(start: number, end: number, agent: Json, signal: AbortSignal | undefined): Promise<Json> {
  const service = ctx.compact
  return service.compactRegion.length >= 5 ? service.compactRegion(agent.session, start, end, agent, signal) : service.compactRegion(start, end, agent, signal)
}

// --- agent calls ---
export function agentId(name: string, id: number): Json { return HAS.namedAgents ? {} : { agentId: `${name}#${id}` } }

/** SendPrompt: `followup` (a55f148516) or `send` (older: queues a follow-up prompt the same way). */
export function followup(agent: Json, content: Json[]): void {
  if (typeof agent.followup === 'function') agent.followup(content)
  else agent.send(content)
}
/** Older prompt-submit takes one separate context; prompt-prefix placement and meta have no counterpart. */
export function checkContexts(a: Json): void {
  if (HAS.multiContexts) return
  if (a.promptPrefix.length > 0 || a.contexts.length > 1 || a.contexts.some((x: Json) => x.meta != null)) {
    throw new NoCounterpart('this checkout\'s prompt-submit takes one separate additionalContext (no prompt-prefix placement, no meta)')
  }
}
export function allowWith(additional: Json[]): Json {
  if (HAS.multiContexts) return { kind: 'allow', additionalContexts: additional }
  const { content, source } = additional[0]
  return { kind: 'allow', additionalContext: { content, source } }
}
/** inject()'s options: a55f148516's default source named (older: the user's); older ones take no meta. */
export function injectOptions(o: Json): Json {
  if (HAS.injectOptions) return o
  if (o.meta !== undefined) throw new NoCounterpart('inject meta: this checkout\'s inject takes a source only')
  return o.source !== undefined ? o : { ...o, source: { kind: 'plugin', plugin: '' } }
}

/** A user cancel: cancel({kind: 'user'}) or, older, cancel() with its default reason. */
export function cancel(agent: Json): void {
  cancelledAt.set(agent, turnStarts(agent))
  if (HAS.cancelCause) agent.cancel({ kind: 'user' })
  else agent.cancel()
}
const turnStarts = (agent: Json): number => agent.session.events.filter((e: Json) => e.type === 'turn/start').length
/** Older continuation seams pass no signal: the turn is interrupted when disposed or cancelled during it. */
export function interrupted(agent: Json, disposed: boolean): boolean { return disposed || cancelledAt.get(agent) === turnStarts(agent) }

/** Reply: a retry needs agent/request-error; a finish failure's status needs LlmFailure. */
export function checkReply(a: Json): void {
  if (a.retry && !HAS.requestError) throw new NoCounterpart('Reply.retry: this checkout has no agent/request-error seam (a failed request ends the turn)')
  if (HAS.llmFailure) return
  for (const c of a.stream ?? []) {
    const f = c.type === 'finish' && c.reason.kind === 'error' ? c.reason.failure : undefined
    if (f === undefined) continue
    const extra = Object.keys(f).filter(k => k !== 'message' && k !== 'code')
    if (extra.length > 0) throw new NoCounterpart(`finish failure ${extra.join(', ')}: this checkout's error finish carries a message and code only`)
  }
}
/** A finish error chunk in the older shape (message, code); noted as a provider failure. */
export function chunkShape(c: Json): Json {
  if (HAS.llmFailure || c.type !== 'finish' || c.reason.kind !== 'error' || c.reason.failure === undefined) return c
  const { message, code } = c.reason.failure
  noteFailure(message, code)
  return { ...c, reason: { kind: 'error', message, ...code === undefined ? {} : { code } } }
}

// --- tools: older checkouts have one global registry; a tool serves every instance that has it ---
const sharedTools = new Map<string, { dispose: () => void; users: Set<object> }>()

/** Set `owner`'s tools in the global registry; `run(agent, name)` is a call's body (by exec.agent). */
export function setSharedTools(owner: object, tools: Json[], run: (agent: Json, name: string) => Promise<Json>): void {
  for (const [name, t] of [...sharedTools]) {
    t.users.delete(owner)
    if (t.users.size === 0) { t.dispose(); sharedTools.delete(name) }
  }
  for (const schema of tools) {
    const known = sharedTools.get(schema.name)
    if (known !== undefined) { known.users.add(owner); continue }
    const dispose = ctx.tools.register({
      name: schema.name, description: schema.description, parameters: schema.parameters,
      execute: (_args: Json, exec: Json) => run(exec.agent, schema.name),
    })
    sharedTools.set(schema.name, { dispose, users: new Set([owner]) })
  }
}

// --- late composition (without HAS.prefixBeforeStep) ---
// Where the loop composes the session prefix after step/start and agent/request, the loop is
// parked at pre-step when the model's Compose comes (BeginStep, Compose, PreStep, Dispatch). The
// Compose is banked there and spent when the loop reaches its agent/session-prefix listener, so
// the rest of a case can be compared. Only a Compose the loop will still reach is banked: this
// loop instance has not composed, and no Compose is banked already; any other is refused, as
// where the loop composes in the model's order. DSH_ADAPTER_DEFER_COMPOSE=1 or =0 overrides the
// detection (1: bank as above whatever the checkout declares; 0: never bank).
const DEFER_ENV = process.env.DSH_ADAPTER_DEFER_COMPOSE
const DEFER_COMPOSE = DEFER_ENV === '1' || (DEFER_ENV !== '0' && !HAS.prefixBeforeStep)
const credits = new WeakMap<object, number>()
const composed = new WeakSet<object>()
/** Compose arrived while parked at pre-step of a loop that composes later: bank it. */
export function bankCompose(inst: object, parkedAt: string | undefined): boolean {
  if (!DEFER_COMPOSE || parkedAt !== 'pre-step' || composed.has(inst) || (credits.get(inst) ?? 0) > 0) return false
  credits.set(inst, 1)
  return true
}
/** The composition gate: spend a banked Compose instead of parking. */
export function spendCompose(inst: object): boolean {
  const n = credits.get(inst) ?? 0
  if (n === 0) return false
  credits.set(inst, n - 1)
  return true
}
/** This loop instance's composition completed (its prefix is cached: no later Compose is banked). */
export function noteComposed(inst: object): void { if (DEFER_COMPOSE) composed.add(inst) }
