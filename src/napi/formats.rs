//! `importTranscript`: transcripts of other agents, from `{ path }` or `{ text }`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{catching, guard, js_error, JsResult as Result};
use super::tasks::AbortFlag;
use super::value::{messages_to_js, optional, Json};
use crate::error::{CfError, Code, Result as CoreResult};
use crate::formats::{import_source, Format, Imported, Source};

fn source(value: Json) -> CoreResult<Source> {
    let value = value.value("source", Code::InvalidArgument)?;
    serde_json::from_value(value)
        .map_err(|_| CfError::invalid_argument("source: expected { path: string } or { text: string }"))
}

fn run(source: &Source, options: Option<Json>, abort: &AbortFlag) -> CoreResult<Imported> {
    let args: crate::formats::ImportOptions = optional("options", options)?;
    let format = args.format.as_deref().map(Format::parse).transpose()?;
    import_source(source, format, &|| abort.is_set())
}

/// Imports a transcript written by another agent (Claude Code, Codex, pi, opencode, SWE-agent,
/// mini-swe-agent, OpenHands, OpenAI chat, Kimi CLI, Copilot CLI, Gemini CLI), from a file
/// (`{ path }`) or from its text (`{ text }`). The format is detected unless `format` is given. What cannot be read becomes a
/// warning with its line number.
#[napi(ts_return_type = "ImportResult")]
pub fn import_transcript<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "TranscriptSource")] source: Json,
    #[napi(ts_arg_type = "ImportOptions")] options: Option<Json>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let imported = run(&self::source(source)?, options, &AbortFlag::default())?;
        messages_to_js(env, &imported, &imported.messages)
    })
}

pub struct ImportTask {
    input: Option<Source>,
    options: Option<Json>,
    abort: AbortFlag,
}

impl Task for ImportTask {
    type Output = CoreResult<Imported>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let input = self.input.take();
        let options = self.options.take();
        let abort = self.abort.clone();
        Ok(catching(|| {
            if abort.is_set() {
                return Err(CfError::aborted());
            }
            match input {
                Some(source) => run(&source, options, &abort),
                None => Err(CfError::new(Code::Internal, "the import task ran twice")),
            }
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        let value = output
            .and_then(|imported| messages_to_js(&env, &imported, &imported.messages))
            .map_err(|e| js_error(&env, &e))?;
        // SAFETY: the lifetime only ties the handle to `env`; napi-rs resolves the promise with it
        // as soon as `resolve` returns, inside the same handle scope, and keeps it no longer.
        Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(value) })
    }
}

/// `importTranscript` off the JS thread; an aborted `signal` rejects with an `AbortError`
/// (`code: 'CF_ABORTED'`).
#[napi(ts_return_type = "Promise<ImportResult>")]
pub fn import_transcript_async(
    env: Env,
    #[napi(ts_arg_type = "TranscriptSource")] source: Json,
    #[napi(ts_arg_type = "ImportOptions")] options: Option<Json>,
    #[napi(ts_arg_type = "AbortSignal")] signal: Option<Unknown>,
) -> Result<AsyncTask<ImportTask>> {
    guard(|| {
        let input = Some(self::source(source)?);
        let abort = AbortFlag::follow(&env, signal)?;
        Ok(AsyncTask::new(ImportTask { input, options, abort }))
    })
}
