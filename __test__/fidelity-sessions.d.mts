// Types of fidelity-sessions.mjs (a plain module so that the fidelity benchmark can import it).
import type { Message, Summarizer } from '../dist/index.js'

export type FactKind = 'modifiedFile' | 'readFile' | 'request' | 'ticket' | 'sha' | 'error' | 'constraint' | 'decision' | 'pin'
export declare const FACT_KINDS: FactKind[]
export declare const COMPACTIONS: number
export declare const SHAPE_NAMES: string[]
export interface GeneratedSession {
  shape: string
  parts: Array<{ messages: Message[]; planted: Record<FactKind, string[]> }>
}
export declare function generateSession(shape: string, seed?: number): GeneratedSession
export declare function forgetfulSummarizer(): Summarizer
export interface Round {
  before: number
  after: number
  facts: Record<FactKind, { planted: number; kept: number; lost: string[] }>
  /** What a summary called the latest request while a newer one was the latest. */
  mislabelled: string[]
  restored: number
  dropped: number
}
export declare function runSession(generated: GeneratedSession, makeSummarizer: () => Summarizer, options?: { audit?: boolean }): Promise<Round[]>
