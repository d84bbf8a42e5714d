// OpenTelemetry's SDK recording in memory for the telemetry specs: a tracer provider and an
// AsyncLocalStorage context manager registered globally (as an app's NodeSDK registers them), and
// the finished spans read back as a tree.
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'

export type { ReadableSpan }

/** Spans recorded in memory, read back as a tree. */
export class Recorded {
  readonly exporter = new InMemorySpanExporter()
  readonly provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(this.exporter)] })

  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans()
  }

  named(name: string): ReadableSpan[] {
    return this.spans().filter((s) => s.name === name)
  }

  parent(span: ReadableSpan): ReadableSpan | undefined {
    const id = span.parentSpanContext?.spanId
    return id === undefined ? undefined : this.spans().find((s) => s.spanContext().spanId === id)
  }

  children(span: ReadableSpan): ReadableSpan[] {
    const id = span.spanContext().spanId
    return this.spans().filter((s) => s.parentSpanContext?.spanId === id)
  }

  /** The names from the span's parent up to its root. */
  ancestry(span: ReadableSpan): string[] {
    const out: string[] = []
    for (let p = this.parent(span); p; p = this.parent(p)) out.push(p.name)
    return out
  }

  reset(): void {
    this.exporter.reset()
  }
}

/** Registers `recorded`'s provider and a context manager globally; returns the function that undoes it. */
export function registerGlobally(recorded: Recorded): () => void {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  trace.setGlobalTracerProvider(recorded.provider)
  return () => {
    trace.disable()
    context.disable()
  }
}
