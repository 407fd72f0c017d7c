// Reference adapter: the real deepseek-harness agent loop behind the conformance adapter protocol
// (spec/vectors.md §5, §10). Run through run.sh, which cds into $HARNESS_DIR and starts this file
// with the harness's own tsx and tsconfig paths, so every import below resolves to that checkout.
//
// The loop is gated at its real awaited seams; each action releases one gate and the adapter then
// waits until every live agent is parked at its next gate (or idle) before it answers.
import { createInterface } from 'node:readline'
import { Context } from 'cordis'
import LlmService, { LlmAdapter, BlockAssembler, HarnessError } from '@deepseek-ai/dsh-llm'
import type { GenerateOptions, LlmResolvedModelInfo, StreamChunk, Message, ContentBlock } from '@deepseek-ai/dsh-llm'
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRegistry from '@deepseek-ai/dsh-tools'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import BasicCompactService from '@deepseek-ai/dsh-compact-basic'
import { pathToFileURL } from 'node:url'
// LEGACY: older checkouts' API shapes, feature-detected; every hook below is marked `LEGACY:`.
import * as legacy from './legacy.mts'
import { HAS, NoCounterpart } from './legacy.mts'
// LEGACY: older checkouts have no token meter.
const TokenMeterService: any = await import('@deepseek-ai/dsh-token-meter').then(m => m.default, () => undefined)

const IMPLEMENTATION = `deepseek-harness a55f148516 (reference adapter)${legacy.SHIMMED ? ` with legacy shims (without ${legacy.MISSING.join(', ')})` : ''}` // LEGACY
const log = (...args: unknown[]): void => { process.stderr.write(args.map(a => typeof a === 'string' ? a : (a instanceof Error ? (a.stack ?? a.message) : JSON.stringify(a))).join(' ') + '\n') }

// Actions this adapter drives faithfully. Left out: none of the alphabet is faked; see README.
const ACTIONS = [
  'Create', 'ForkDrive', 'Resume', 'Register', 'MountCompaction', 'MutateContribution', 'SendPrompt', 'BeginStep',
  'Compose', 'PreStep', 'Dispatch', 'Reply', 'RunTools', 'PostStep', 'Inject', 'Steer', 'Cancel', 'Dispose', 'SetSystem', 'SetTools',
]
// The scripted fake's routes (spec/vectors.md §5): both go to the one gate, so a change of provider alone reaches the wire.
const PROVIDERS = ['mock', 'mock-b']
const UNSUPPORTED = new Set((process.env.DSH_ADAPTER_UNSUPPORTED ?? '').split(',').filter(Boolean))

class Refused extends Error {}

type GateKind = 'begin' | 'compose' | 'pre-step' | 'dispatch' | 'stream' | 'tools' | 'post-step'
type Json = any

interface Gate { kind: GateKind; resolve: (payload: Json) => void }

interface Inst {
  id: number
  agentName: string
  sessionId: string
  handle: any
  agent: any
  system: string
  tools: Json[]
  toolDisposers: Array<() => void>
  gate?: Gate
  turn: number
  step: number
  passedBegin: boolean // the turn-stop gate already stood for this step's BeginStep
  decision?: Json
  pendingSteers: number
  toolOutputs?: string[]
  toolIndex: number
  pendingPrompts: Json[] // SendPrompt actions whose prompt-submit has not run yet, oldest first
  reply?: Json
  disposed: boolean
}

interface ScriptedListener { name: string; agent: string | null; script: Json[]; calls: number; held: Json[][] }

// --- world state (reset per case) ---
let ctx: Context
let insts: Inst[] = []
let byAgent = new Map<any, Inst>()
let bySession = new Map<string, Inst>()
let sessions = new Map<string, any>() // session id -> current Session object
let reported = new Map<string, number>() // session id -> events already reported
let sent: Json[] = []
let listeners: ScriptedListener[] = []
let policy: Json | null = null
let compactFiber: any
let postCompactDispose: (() => void) | undefined
let summaries: string[] = []
let postAction: Json | undefined
let generation = 0

function park(inst: Inst, kind: GateKind): Promise<Json> {
  return new Promise((resolve) => { inst.gate = { kind, resolve } })
}

function release(inst: Inst, kind: GateKind, payload: Json = {}): void {
  const gate = inst.gate
  if (gate === undefined || gate.kind !== kind) throw new Refused(`not parked at ${kind} (at ${gate?.kind ?? (inst.agent.status as string)})`)
  inst.gate = undefined
  gate.resolve(payload)
}

function instOf(agent: any): Inst | undefined { return byAgent.get(agent) }

/** Whether the positions `[i, j]` (or none) name nodes of the instance's surface now. */
function fits(inst: Inst, pair: [number, number] | null | undefined): boolean {
  if (pair == null) return true
  const [i, j] = pair
  return 0 <= i && i <= j && j < legacy.seqs(inst.agent.session).length
}

function text(t: string): ContentBlock { return { type: 'text', text: t } as ContentBlock }

function configOf(c: Json): Json {
  if (!HAS.providers) return legacy.configOf(c) // LEGACY: routing by one model name
  const out: Json = { provider: c.provider, model: c.model }
  if (c.reasoningEffort != null) out.reasoningEffort = c.reasoningEffort
  if (c.temperature != null) out.temperature = c.temperature
  if (c.maxTokens != null) out.maxTokens = c.maxTokens
  if (c.stop != null) out.stop = c.stop
  return out
}

function optionsOf(o: Json): Json {
  if (!HAS.providers) return legacy.optionsOf(o) // LEGACY: routing by one model name
  const out: Json = {}
  if (o.provider != null) out.provider = o.provider
  if (o.model != null) out.model = o.model
  return out
}

/** The model's Reply without `stream`: one block-end per block, then the finish chunk. */
function replyChunks(r: Json): Json[] {
  if (r.stream != null) return r.stream
  const blocks: Json[] = r.text ? [{ type: 'text', text: r.text }] : []
  for (const c of r.toolCalls ?? []) blocks.push({ type: 'tool-call', id: c.id, name: c.name, arguments: c.arguments })
  const finish = (r.toolCalls ?? []).length > 0 ? 'tool-calls' : (r.maxTokens ? 'max-tokens' : 'stop')
  return [...blocks.map((block, index) => ({ type: 'block-end', index, block })), { type: 'finish', reason: { kind: finish } }]
}

function failureError(r: Json): Error {
  legacy.noteFailure(r.failureMessage ?? 'request failed', r.failure ?? undefined) // LEGACY: the older turn/end error shape
  // The adapter's own error class: its code and message become the step's failure (LLM/adapter-failure.ts).
  return new HarnessError(r.failureMessage ?? 'request failed', r.failure)
}

/** The scripted fake provider: loop requests await a Reply action; the summarizer consumes `summaries`. */
class GateAdapter extends LlmAdapter {
  constructor(private readonly gen: number) { super() }

  override resolveModel(provider: string, model: string): Promise<LlmResolvedModelInfo> {
    const window = policy?.contextWindow
    // The mock model accepts the efforts the vectors name and has no default effort (nothing materialized).
    const reasoning = { efforts: ['low', 'medium', 'high', 'max'].map(id => ({ id, name: id })) }
    return Promise.resolve({ provider, id: model, name: model, reasoning, ...window == null ? {} : { context: { contextWindow: window } } } as LlmResolvedModelInfo)
  }

  override async * stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    if (this.gen !== generation) { await new Promise(() => {}); return } // a previous case's context: park forever
    const copy: Json = { ...options }
    delete copy.signal
    const inst = bySession.get(String(options.sessionId))
    const loopRequest = legacy.isLoopRequest(options) // LEGACY: older requests carry no purpose
    const request = legacy.requestShape(JSON.parse(JSON.stringify(copy)), options, sessions.get(String(options.sessionId))) // LEGACY
    sent.push({ instance: inst?.id ?? -1, loopRequest, request, session: String(options.sessionId), step: inst?.step ?? 0, turn: inst?.turn ?? 0 })
    if (!loopRequest || inst === undefined) {
      const summary = summaries.length > 0 ? summaries.shift()! : 'summary'
      yield { type: 'block-end', index: 0, block: { type: 'text', text: summary } } as StreamChunk
      yield { type: 'finish', reason: { kind: 'stop' } } as StreamChunk
      return
    }
    while (true) {
      const reply = await park(inst, 'stream')
      inst.toolOutputs = undefined
      inst.toolIndex = 0
      if (reply.failure != null && reply.stream == null) throw failureError(reply)
      for (const chunk of replyChunks(reply)) yield legacy.chunkShape(chunk) as StreamChunk // LEGACY: older finish errors
      if (reply.more) continue
      if (reply.failure != null) throw failureError(reply)
      return
    }
  }
}

/** Compaction with the policy's instruction: the service's documented summarize() hook, answered by the harness's own
 * summarizer (its target rule, its finish and empty-summary errors) with the policy's instruction in place of its fixed
 * one (§23 D-15), so that nothing of the summarizer is restated here. Used only where the summarizer module exists. */
class PolicyCompactService extends BasicCompactService {
  protected override async summarize(input: Json, agent: Json, signal?: AbortSignal): Promise<Json> {
    const llm = (this as Json).ctx.llm
    const instruction = { role: 'user', content: [text(policy?.instruction ?? 'Summarize the conversation above.')] }
    const instructed = { llm: { stream: (options: Json) => llm.stream({ ...options, messages: [...options.messages.slice(0, -1), instruction] }) } }
    return summarizer.summarizeWithLlm(instructed, (this as Json).config, input, agent, signal)
  }
}

// The harness frames a checkpoint with its own fixed preamble (CB/summarizer.ts frameSummary); the
// model takes the preamble as configuration (§23 D-15), so the adapter reports it as the policy's.
// It is read from the harness at run time (the framing of no summary), never restated here.
// LEGACY: older services have no summarizer module; they frame in a private method.
const summarizer = HAS.summarizer ? await import(pathToFileURL(`${process.env.HARNESS_DIR}/packages/compact/compact-basic/src/summarizer.ts`).href) : undefined
const HARNESS_PREAMBLE = ((summarizer?.frameSummary([]) ?? legacy.frameNoSummary())[0] as { text: string }).text.replace(/\n\n<compacted-summary>$/, '')
const TRANSLATE_PREAMBLE = process.env.DSH_ADAPTER_TRANSLATE_PREAMBLE !== '0'

function translate(value: Json): Json {
  if (!TRANSLATE_PREAMBLE || policy == null) return value
  const s = JSON.stringify(value)
  if (!s.includes(HARNESS_PREAMBLE)) return value
  return JSON.parse(s.split(JSON.stringify(HARNESS_PREAMBLE).slice(1, -1)).join(JSON.stringify(policy.preamble).slice(1, -1)))
}

function eventJson(raw: Json, events: Json[], index: number): Json {
  const e = legacy.eventShape(raw, events, index) // LEGACY: the older log vocabulary
  const out: Json = { type: e.type, seq: e.seq, data: translate(e.data) }
  if (e.sourceEventSeqs !== undefined) out.sourceEventSeqs = e.sourceEventSeqs
  if (e.surfaceOp !== undefined) out.surfaceOp = e.surfaceOp
  return out
}

async function reset(): Promise<void> {
  generation++
  for (const inst of insts) {
    try { void Promise.resolve(inst.handle?.dispose()).catch(() => {}) } catch { /* ignore */ }
  }
  insts = []; byAgent = new Map(); bySession = new Map(); sessions = new Map(); reported = new Map(); sent = []; listeners = []
  policy = null; compactFiber = undefined; postCompactDispose = undefined; summaries = []
  ctx = new Context()
  ctx.logger.exporter({ levels: { default: 2 }, export: (m: Json) => { log(`[${m.type}] ${m.name}:`, ...m.args) } } as Json)
  await ctx.plugin(LlmService)
  await ctx.plugin(SessionStore)
  await ctx.plugin(SystemPrompt, { persona: '' })
  await ctx.plugin(ToolRegistry)
  await ctx.plugin(AgentRegistry)
  if (TokenMeterService !== undefined) await ctx.plugin(TokenMeterService) // LEGACY
  await ctx.plugin(AgentLoop, { agents: [] })
  const gate = new GateAdapter(generation)
  legacy.reset(ctx, gate, PROVIDERS) // LEGACY: without providers, configOf/optionsOf register each `<provider>/<model>` route
  if (HAS.providers) ctx.llm.registerAdapter(PROVIDERS, gate)
  const c = ctx as Json

  // BeginStep (a): the turn-stop seam, awaited after step/end when the turn goes on.
  // LEGACY: without agent/post-step and agent/turn-stop, the continuation waterfall is the first
  // awaited seam after the tool batch (PostStep gates before it) and the last one before the next
  // step (BeginStep gates after it); older seams pass no signal.
  c.on('agent/turn-continuation', async (agent: Json, ...args: Json[]) => {
    const next = legacy.last<() => Promise<Json>>(args)
    const inst = instOf(agent)
    if (inst && !HAS.postStep) { await postStep(inst); await postCompact(agent, undefined) } // LEGACY
    const decision = await next()
    if (inst) inst.decision = decision
    if (inst && !HAS.turnStop) await turnStop(inst) // LEGACY
    return decision
  })
  c.on('agent/turn-stop', async (agent: Json) => {
    const inst = instOf(agent)
    if (inst) await turnStop(inst)
    return undefined
  })
  // BeginStep (b): system-prompt assembly, when no turn-stop gate stood before it (step 1, a retry).
  c.on('system-prompt/assemble', async (assembly: Json, context: Json, next: () => Promise<Json>) => {
    const inst = instOf(context.agent)
    if (!inst) return next()
    if (!inst.passedBegin) await park(inst, 'begin')
    inst.passedBegin = false
    const base = await next()
    // The rendered prompt is exactly the instance's system text (empty: no system).
    return { ...base, sections: [{ name: 'adapter:system', text: inst.system }] }
  })
  // Compose: the first agent/session-prefix listener awaits the action, then delegates.
  c.on('agent/session-prefix', async (agent: Json, _prefix: Json, _signal: AbortSignal, next: () => Promise<Json>) => {
    const inst = instOf(agent)
    if (inst && !legacy.spendCompose(inst)) await park(inst, 'compose') // LEGACY: a Compose banked where the loop composes late
    const prefix = await next()
    if (inst) legacy.noteComposed(inst) // LEGACY: no later Compose is banked for this loop instance
    return prefix
  })
  // PreStep: the agent/pre-step seam; then a listener's own replacement and compactRegion call.
  c.on('agent/pre-step', async (agent: Json, turn: number, step: number, ...args: Json[]) => {
    const signal = legacy.last<AbortSignal>(args) // LEGACY: older seams pass the system prompt (and prefix) before it
    const inst = instOf(agent)
    if (!inst) return
    inst.turn = turn; inst.step = step
    const action = await park(inst, 'pre-step')
    summaries = [...(action.summaries ?? [])]
    if (signal.aborted) return
    const session = agent.session
    if (action.replace != null) {
      const r = action.replace
      const nodes = legacy.seqs(session) // LEGACY: older surface nodes are objects
      const shadowed = nodes.slice(r.start, r.end + 1)
      session.append('user/message', { content: [text(r.text)], source: r.source },
        { surfaceOp: { op: 'replace', start: shadowed[0], end: shadowed[shadowed.length - 1] }, sourceEventSeqs: shadowed })
    }
    if (action.compact != null) {
      const nodes = legacy.seqs(session)
      await legacy.compactRegion(nodes[action.compact[0]]!, nodes[action.compact[1]]!, agent, signal) // LEGACY: argument order
    }
  })
  // Dispatch: the agent/request seam (optionally replacing the config).
  c.on('agent/request', async (agent: Json, turn: number, step: number, _config: Json, ...args: Json[]) => {
    const next = legacy.last<() => Promise<Json>>(args) // LEGACY: older seams pass no signal
    const inst = instOf(agent)
    if (!inst) return next()
    inst.turn = turn; inst.step = step
    const action = await park(inst, 'dispatch')
    if (action.config != null) return configOf(action.config)
    return next()
  })
  c.on('agent/request-error', async (agent: Json, _t: number, _s: number, _e: Json, _f: Json, _p: Json, _signal: AbortSignal, next: () => Promise<Json>) => {
    const inst = instOf(agent)
    if (inst?.reply?.retry) return { action: 'retry' }
    return next()
  })
  // PostStep: the agent/post-step seam; the service's pressure listener runs after it.
  c.on('agent/post-step', async (agent: Json) => {
    const inst = instOf(agent)
    if (inst) await postStep(inst)
  })
  await mountCompaction(DEFAULT_POLICY)
  // SendPrompt: the prompt-submit seam decides block / contexts.
  // A queued prompt's answer is found by its text: the inbox snapshots the content, so identity is lost.
  // A turn opened by steering (idle, or left by an error or cancel) has no entry and takes the default.
  c.on('agent/prompt-submit', async (agent: Json, content: Json, _source: Json, ...args: Json[]) => {
    const next = legacy.last<() => Promise<Json>>(args) // LEGACY: older seams pass no signal
    const inst = instOf(agent)
    const said = content.length === 1 && content[0].type === 'text' ? content[0].text : undefined
    const at = inst?.pendingPrompts.findIndex((p: Json) => p.text === said) ?? -1
    if (!inst || at < 0) return next()
    const [p] = inst.pendingPrompts.splice(at, 1)
    if (p.blocked) return { kind: 'block', reason: p.blockReason ?? 'blocked' } // the hook's own reason (absent: the model's)
    const ctxOf = (x: Json, placement: string): Json => ({ content: [text(x.text)], source: x.source, ...placement === 'prompt-prefix' ? { placement } : {}, ...x.meta == null ? {} : { meta: x.meta } })
    const additional = [...p.promptPrefix.map((x: Json) => ctxOf(x, 'prompt-prefix')), ...p.contexts.map((x: Json) => ctxOf(x, 'separate'))]
    if (additional.length === 0) return next()
    return legacy.allowWith(additional) // LEGACY: older checkouts take one additionalContext
  })
  c.on('session/event', (session: Json, event: Json) => {
    const inst = bySession.get(String(session.id))
    if (inst === undefined) return
    if (event.type === 'steering/message' && inst.pendingSteers > 0) inst.pendingSteers--
    if (event.type === 'turn/end') inst.pendingSteers = 0 // undrained steering is queued input now (L/loop.ts:266-278)
    // A turn that ends at the checkpoint after the turn-stop gate (a cancel there) never reaches its next step's
    // assembly: the gate it passed is not the next turn's, whose first BeginStep parks in the assembly again.
    if (event.type === 'turn/end') inst.passedBegin = false
  })
}

/** A post-step listener's compactRegion call, registered after the compaction service's pressure listener. */
function registerPostCompact(): void {
  postCompactDispose?.()
  if (!HAS.postStep) return // LEGACY: run from the continuation gate
  postCompactDispose = (ctx as Json).on('agent/post-step', async (agent: Json, _turn: number, _step: number, signal: AbortSignal) => {
    await postCompact(agent, signal)
  })
}

async function postStep(inst: Inst): Promise<void> {
  postAction = await park(inst, 'post-step')
  summaries = [...(postAction.summaries ?? [])]
}

async function turnStop(inst: Inst): Promise<void> {
  const goesOn = inst.decision?.action === 'continue' || inst.pendingSteers > 0
  inst.decision = undefined
  if (!goesOn) return
  await park(inst, 'begin')
  inst.passedBegin = true
}

async function postCompact(agent: Json, signal: AbortSignal | undefined): Promise<void> {
  const inst = instOf(agent)
  const action = postAction
  postAction = undefined
  if (!inst || action?.compact == null) return
  if (signal?.aborted ?? legacy.interrupted(agent, inst.disposed)) return // LEGACY: older seams pass no signal
  const nodes = legacy.seqs(agent.session)
  const [i, j] = action.compact
  if (!(0 <= i && i <= j && j < nodes.length)) return // a listener that finds fewer nodes calls nothing
  if ((ctx as Json).compact === undefined) throw new Error('no compaction service loaded')
  await legacy.compactRegion(nodes[i]!, nodes[j]!, agent, signal)
}

function scriptedListener(l: ScriptedListener) {
  return async (agent: Json, _prefix: Json, _signal: AbortSignal, next: () => Promise<Json>): Promise<Json> => {
    const inst = instOf(agent)
    if (l.agent !== null && inst?.agentName !== l.agent) return next()
    const k = Math.min(l.calls, l.script.length - 1)
    l.calls++
    const call = l.script[k]
    const held = l.held[k]!
    switch (call.call) {
      case 'Throw': throw thrown(l.name, call)
      case 'ShortCircuit': return held
      case 'Append': return [...await next(), ...held]
      case 'InjectThenPrepend': // the listener's own source and meta, as Inject passes them
        agent.inject([text(call.text)], legacy.injectOptions({ ...call.source == null ? {} : { source: call.source }, ...call.meta == null ? {} : { meta: call.meta } })) // LEGACY
        return [...held, ...await next()]
      case 'CancelThenPrepend':
        legacy.cancel(agent) // LEGACY: older cancel(reason?: string)
        return [...held, ...await next()]
      default: return [...held, ...await next()]
    }
  }
}

/** A Throw's error: its message (absent: one naming the listener) with one Error cause per `causes` entry, outermost first. */
function thrown(name: string, call: Json): Error {
  const messages: string[] = [call.message ?? `session-prefix listener ${name} threw`, ...call.causes ?? []]
  return messages.reduceRight<Error | undefined>((cause, message) => new Error(message, cause === undefined ? undefined : { cause }), undefined)!
}

/** A tool call's body: the first call of a batch parks for RunTools; outputs are handed out in call order. */
async function runTool(inst: Inst, name: string): Promise<Json> {
  if (inst.toolOutputs === undefined) inst.toolOutputs = (await park(inst, 'tools')).outputs ?? []
  const k = inst.toolIndex++
  return [text(k < inst.toolOutputs!.length ? inst.toolOutputs![k]! : `${name} done`)]
}

async function setTools(inst: Inst, tools: Json[]): Promise<void> {
  inst.tools = tools
  if (!HAS.scopedAgents) { // LEGACY: one global registry, a call served by its exec.agent's instance
    legacy.setSharedTools(inst, inst.disposed ? [] : tools, (agent: Json, name: string) => runTool(instOf(agent)!, name))
    return
  }
  for (const d of inst.toolDisposers) d()
  inst.toolDisposers = []
  for (const schema of tools) {
    const dispose = inst.agent.ctx.tools.register({
      name: schema.name, description: schema.description, parameters: schema.parameters,
      output: { schema: { type: 'array', items: { type: 'object' } }, render: (_a: Json, v: Json) => v },
      execute: () => runTool(inst, schema.name),
    })
    inst.toolDisposers.push(dispose)
  }
}

async function newInstance(agentName: string, sessionId: string, options: Json, system: string, tools: Json[], seed?: Json[], meta?: Json): Promise<Inst> {
  const inst: Inst = {
    id: insts.length, agentName, sessionId, handle: undefined, agent: undefined, system, tools: [], toolDisposers: [],
    turn: 0, step: 0, passedBegin: false, pendingSteers: 0, pendingPrompts: [], toolIndex: 0, disposed: false,
  }
  const handle = await (ctx as Json).agents.create({
    ...legacy.agentId(agentName, inst.id), // LEGACY: older checkouts require an agentId
    sessionId: SessionId(sessionId), agentOptions: optionsOf(options),
    ...seed === undefined ? {} : { seed }, ...meta === undefined ? {} : { meta },
  })
  inst.handle = handle
  inst.agent = handle.agent
  insts.push(inst)
  byAgent.set(handle.agent, inst)
  bySession.set(sessionId, inst)
  sessions.set(sessionId, handle.agent.session)
  if (!reported.has(sessionId) || meta?.parentSession !== undefined) reported.set(sessionId, meta?.parentSession !== undefined ? 0 : (seed?.length ?? 0))
  await setTools(inst, tools)
  return inst
}

function instance(i: number): Inst {
  const inst = insts[i]
  if (inst === undefined) throw new Refused(`no instance ${i}`)
  return inst
}

function live(i: number): Inst {
  const inst = instance(i)
  if (inst.disposed) throw new Refused(`instance ${i} is disposed`)
  return inst
}

function turnOpen(inst: Inst): boolean { return inst.agent.status === 'running' }

/** Wait until every live agent is parked at a gate or idle, and nothing moved for a few macrotasks. */
async function settle(): Promise<void> {
  let last = ''
  let stable = 0
  const deadline = Date.now() + 5000
  while (Date.now() < deadline) {
    await new Promise(r => setImmediate(r))
    const state = insts.map(i => `${i.gate?.kind ?? i.agent.status}:${i.agent.session.events.length}`).join('|') + `#${sent.length}`
    const quiet = insts.every(i => i.gate !== undefined || i.agent.status !== 'running')
    if (state === last && quiet) { if (++stable >= 5) return } else stable = 0
    last = state
  }
  log('settle: timed out')
}

async function apply(a: Json): Promise<void> {
  if (UNSUPPORTED.has(a.action)) throw new Refused(`${a.action} not supported`)
  switch (a.action) {
    case 'Create': {
      if ((ctx as Json).sessions.get(SessionId(a.sessionId)) !== undefined) throw new Refused(`session ${a.sessionId} exists`)
      await newInstance(a.agent, a.sessionId, a.options, a.system, a.tools)
      return
    }
    case 'ForkDrive': {
      const source = sessions.get(a.sourceId)
      if (source === undefined) throw new Refused(`no session ${a.sourceId}`)
      if ((ctx as Json).sessions.get(SessionId(a.childId)) !== undefined) throw new Refused(`session ${a.childId} exists`)
      // SessionStore.fork validates the boundary and cuts the seed; its child lives in a scratch fiber
      // that is disposed at once, and the seed drives a new agent under the child id.
      let forked: Json
      let thrown: unknown
      const tmp = `__adapter-fork-${a.childId}`
      const fiber = (ctx as Json).plugin({ name: 'adapter-fork', inject: ['sessions'], apply: (sub: Json) => {
        try { forked = sub.sessions.fork(source, a.boundary ?? undefined, SessionId(tmp)) } catch (e) { thrown = e }
      } })
      await fiber
      const events = forked?.events
      const header = forked?.header
      fiber.dispose()
      if (thrown !== undefined || forked === undefined) throw new Refused(`fork refused: ${(thrown as Error)?.message}`)
      await newInstance(a.agent, a.childId, a.options, a.system, a.tools, events.map((e: Json) => structuredClone(e)),
        { parentSession: header.parentSession, seedLength: header.seedLength })
      return
    }
    case 'Resume': {
      const old = sessions.get(a.sessionId)
      if (old === undefined) throw new Refused(`no session ${a.sessionId}`)
      // A driver disposed mid-turn still runs to its checkpoint, and the store keeps the session until it has left
      // (L/index.ts:216-235): the same id cannot be entered again before, so the restart waits, as the model's guard does.
      if (insts.some(i => i.sessionId === a.sessionId && (turnOpen(i) || i.gate !== undefined))) throw new Refused('a driver of the session is running')
      const drivers = insts.filter(i => i.sessionId === a.sessionId && !i.disposed)
      // A restart: the old agents are gone (disposed while idle: no event), a new agent drives the stored log.
      for (const d of drivers) { d.disposed = true; await d.handle.dispose(); if (!HAS.scopedAgents) await setTools(d, []) } // LEGACY: shared tools
      const events = old.events.map((e: Json) => structuredClone(e))
      await newInstance(a.agent, a.sessionId, a.options, a.system, a.tools, events)
      return
    }
    case 'Register': {
      const l = a.listener
      if (listeners.some(x => x.name === l.name) || l.script.length === 0) throw new Refused('duplicate or empty listener')
      const entry: ScriptedListener = { name: l.name, agent: l.agent, script: l.script, calls: 0, held: l.script.map((c: Json) => structuredClone(c.messages ?? [])) }
      listeners.push(entry);
      (ctx as Json).on('agent/session-prefix', scriptedListener(entry))
      return
    }
    case 'MutateContribution': {
      const l = listeners.find(x => x.name === a.listener)
      if (l === undefined) throw new Refused(`no listener ${a.listener}`)
      // Change the contributed objects in place (the listener keeps returning them).
      for (const held of l.held) {
        const fresh = structuredClone(a.messages)
        held.splice(0, held.length, ...held.slice(0, fresh.length).map((old: Json, n: number) => {
          for (const key of Object.keys(old)) delete old[key]
          return Object.assign(old, fresh[n])
        }), ...fresh.slice(held.length))
      }
      return
    }
    case 'MountCompaction': await mountCompaction(a.policy); return
    default: return applyLoop(a)
  }
  throw new Error(`unknown action ${a.action}`)
}

// The model's CompactPolicy() defaults (model/prefix_model/loop/compaction.py): the basic service is
// always loaded (no capacity: no pressure). A vector that compacts frames with these texts.
const DEFAULT_POLICY = {
  compactionRetries: 1, contextWindow: null, instruction: 'Summarize the conversation above.', maxTokens: 8192,
  preamble: 'Checkpoint: the compaction service condensed the conversation before this point to free up context. '
    + 'Take the summary as settled background, rely on it without repeating it, and go on with the task from '
    + 'the messages that follow this checkpoint, as though nothing were taken away from the conversation.',
  retainRatio: 0.16, retainTokens: null,
  summarizationModel: '', summarizationProvider: '', thresholdRatio: 0.8,
}

async function mountCompaction(p: Json): Promise<void> {
  {
      policy = p
      if (compactFiber !== undefined) { compactFiber.dispose(); compactFiber = undefined }
      // LEGACY: older services take their window in the config and have no instruction hook.
      if (!HAS.summarizer) compactFiber = (ctx as Json).plugin(BasicCompactService, legacy.compactConfig(p))
      else compactFiber = (ctx as Json).plugin(PolicyCompactService, {
        // The service refuses retainRatio beside retainTokens (mutually exclusive); the model's policy keeps the ratio's
        // default and lets retainTokens win, so only the one in force is passed.
        thresholdRatio: p.thresholdRatio, ...p.retainTokens == null ? { retainRatio: p.retainRatio } : { retainTokens: p.retainTokens },
        summarizationProvider: p.summarizationProvider, summarizationModel: p.summarizationModel,
        maxTokens: p.maxTokens, compactionRetries: p.compactionRetries,
      })
      await compactFiber
      registerPostCompact()
  }
}

async function applyLoop(a: Json): Promise<void> {
  switch (a.action) {
    case 'SendPrompt': {
      const inst = live(a.instance)
      if (!a.blocked && a.blockReason != null) throw new Refused('a block reason without a block') // the reason is the block decision's
      legacy.checkContexts(a) // LEGACY: no-counterpart for what one additionalContext cannot carry
      inst.pendingPrompts.push(a)
      legacy.followup(inst.agent, [text(a.text)]) // LEGACY: older send()
      return
    }
    case 'BeginStep': release(instance(a.instance), 'begin'); return
    case 'Compose': {
      const inst = instance(a.instance)
      if (!legacy.bankCompose(inst, inst.gate?.kind)) release(inst, 'compose') // LEGACY: banked where the loop composes after the step boundary
      return
    }
    case 'PreStep': {
      const inst = instance(a.instance)
      // The action names positions of the surface it finds (the model's guard, LOOP's action language): a range past it is no action.
      if (!fits(inst, a.compact) || (a.replace != null && !fits(inst, [a.replace.start, a.replace.end]))) throw new Refused('positions past the surface')
      release(inst, 'pre-step', a); return
    }
    case 'Dispatch':
      legacy.checkConfig(a.config) // LEGACY: no-counterpart effort
      release(instance(a.instance), 'dispatch', a); return
    case 'Reply': {
      const inst = instance(a.instance)
      legacy.checkReply(a) // LEGACY: no-counterpart retry or failure status
      inst.reply = a
      release(inst, 'stream', a)
      return
    }
    case 'RunTools': release(instance(a.instance), 'tools', a); return
    case 'PostStep': {
      const inst = instance(a.instance)
      if (!fits(inst, a.compact)) throw new Refused('positions past the surface') // as PreStep; pressure may still leave fewer (postCompact)
      release(inst, 'post-step', a); return
    }
    case 'Inject': {
      const inst = live(a.instance)
      inst.agent.inject([text(a.text)], legacy.injectOptions({ ...a.source == null ? {} : { source: a.source }, ...a.meta == null ? {} : { meta: a.meta } })) // LEGACY
      return
    }
    case 'Steer': {
      const inst = live(a.instance)
      if (turnOpen(inst)) inst.pendingSteers++ // idle, the harness opens an ordinary turn instead
      inst.agent.steer([text(a.text)])
      return
    }
    case 'Cancel': {
      const inst = live(a.instance)
      inst.pendingSteers = 0 // the inbox is cleared
      inst.pendingPrompts = []
      legacy.cancel(inst.agent) // LEGACY: older cancel(reason?: string)
      return
    }
    case 'Dispose': {
      const inst = live(a.instance)
      inst.disposed = true
      void Promise.resolve(inst.handle.dispose()).catch((e: unknown) => log('dispose failed', e))
      if (!HAS.scopedAgents) await setTools(inst, []) // LEGACY: release shared tools (scoped ones go with the agent)
      return
    }
    case 'SetSystem': live(a.instance).system = a.text; return
    case 'SetTools': { const inst = live(a.instance); await setTools(inst, a.tools); return }
  }
  throw new Error(`unknown action ${a.action}`)
}

function collect(): Json {
  const appended: Json = {}
  for (const [sid, session] of sessions) {
    const events = session.events
    const from = reported.get(sid) ?? 0
    appended[sid] = events.slice(from).map((e: Json, k: number) => eventJson(e, events, from + k))
    reported.set(sid, events.length)
  }
  const requests = sent.map(r => ({ ...r, request: translate(r.request) }))
  sent = []
  return { appended, sent: requests }
}

async function handle(req: Json): Promise<Json> {
  const { id, method, params } = req
  switch (method) {
    case 'hello':
      if (params?.protocol !== 1) return { id, error: { code: 'unsupported-protocol', message: 'protocol 1 only' } }
      return { id, result: { protocol: 1, implementation: IMPLEMENTATION, kinds: ['scenario'], actions: ACTIONS.filter(a => !UNSUPPORTED.has(a)), providers: PROVIDERS } }
    case 'reset':
      await reset()
      return { id, result: {} }
    case 'apply': {
      try {
        await apply(params.action)
      } catch (error) {
        await settle()
        collect() // whatever moved is not this action's
        if (error instanceof Refused) return { id, error: { code: 'refused', message: `${params.action.action}: ${error.message}` } }
        if (error instanceof NoCounterpart) return { id, error: { code: 'no-counterpart', message: error.message } } // LEGACY
        log(error)
        return { id, error: { code: 'bad-action', message: String((error as Error)?.message ?? error) } }
      }
      await settle()
      return { id, result: collect() }
    }
    case 'shutdown':
      return { id, result: {} }
    default:
      return { id, error: { code: 'unknown-method', message: String(method) } }
  }
}

const rl = createInterface({ input: process.stdin })
let chain = Promise.resolve()
rl.on('line', (line) => {
  chain = chain.then(async () => {
    let req: Json
    try { req = JSON.parse(line) } catch { process.stdout.write(JSON.stringify({ id: null, error: { code: 'bad-request', message: 'not JSON' } }) + '\n'); return }
    const res = await handle(req)
    process.stdout.write(JSON.stringify(res) + '\n')
    if (req.method === 'shutdown') process.exit(0)
  }).catch((e: unknown) => { log('adapter failure', e) })
})
rl.on('close', () => { void chain.then(() => process.exit(0)) })
