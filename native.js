// The native addon (`contextfold/native`; `contextfold` re-exports it): loads the binary for this
// platform, or throws one error that says what to do. In order:
//   1. `NAPI_RS_NATIVE_LIBRARY_PATH`, when set (napi-rs's override);
//   2. the platform package (`contextfold-linux-x64-gnu`, ...), an optional dependency of the
//      published package, when its version is this package's: another version is reported, never
//      loaded (a warning when 3 loads, else the error);
//   3. a build beside this file (`contextfold.linux-x64-gnu.node`, as `npm install` makes in a clone).
// `binding.js` is napi-rs's generated loader and `native.d.ts` the generated types. Whenever the
// generated loader would pick the same binary, it loads it (so its exports, which Node's ES module
// interop reads from this file, stay the ones napi-rs declares); this file steps in only where the
// order above differs from the generated one.
'use strict'

const { existsSync, readFileSync } = require('node:fs')
const { join } = require('node:path')

const { version, napi, packedLocally } = require('./package.json')

/** This platform as napi-rs names it (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`). */
function platformName() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function isMusl() {
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    return !process.report?.getReport?.().header?.glibcVersionRuntime
  }
}

/** `x86_64-unknown-linux-gnu` -> `linux-x64-gnu`, as for `platformName()`. */
function targetName(triple) {
  const [cpu, , os, abi] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[cpu] ?? cpu
  if (os === 'darwin') return `darwin-${arch}`
  return [os === 'windows' ? 'win32' : os, arch, abi].filter(Boolean).join('-')
}

function nativeError(code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause })
  error.code = code
  return error
}

const platform = platformName()
const pkgName = `${napi.packageName ?? 'contextfold'}-${platform}`
const localBuild = join(__dirname, `${napi.binaryName}.${platform}.node`)
const targets = napi.targets.map(targetName)

/** The platform package's version, or undefined when it is not installed. */
function platformPackageVersion() {
  try {
    return require(`${pkgName}/package.json`).version
  } catch {
    return undefined
  }
}

function versionMismatch(found) {
  return (
    `${pkgName}@${found} is installed, but contextfold ${version} needs ${pkgName}@${version}, so it was not ` +
    'loaded. Reinstall contextfold (remove node_modules and the lockfile if the versions stay apart).'
  )
}

/** What to install: the platform package from the registry, or (a package `npm run pack:local` made) the tarball beside it. */
function missingPackage() {
  if (packedLocally?.platformTarball) {
    return (
      `The platform package ${pkgName} is not installed; this contextfold was packed from a clone (npm run pack:local), ` +
      `so no registry has it: install it with contextfold, the two tarballs together (npm install <contextfold tarball> ${packedLocally.platformTarball}).`
    )
  }
  return (
    `The platform package ${pkgName} is not installed (was the install run with --omit=optional or --no-optional? ` +
    `Install again without it, or add it yourself: npm install ${pkgName}@${version}).`
  )
}

function notFound(cause) {
  const why = targets.includes(platform) ? missingPackage() : `contextfold ships prebuilt binaries for ${targets.join(', ')}.`
  return nativeError(
    'CF_NATIVE_MISSING',
    `contextfold has no native binary for ${platform} (Node ${process.versions.node}). ${why} To build one from ` +
      'source: clone the contextfold repository, run `npm install` there (it needs Rust, https://rustup.rs), then ' +
      `copy its ${napi.binaryName}.${platform}.node into ${__dirname} (README: "Building from source").`,
    cause,
  )
}

/**
 * The binary to load here, where the generated loader's order (local build first, then the
 * platform package whatever its version) would pick another: the platform package when a local
 * build would shadow it, the local build when the platform package is of another version.
 * Undefined when the generated loader picks the right one.
 */
function directPath() {
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) return undefined
  const installed = platformPackageVersion()
  const local = existsSync(localBuild)
  if (installed === undefined) return undefined
  if (installed === version) return local ? pkgName : undefined
  if (!local) {
    throw nativeError('CF_NATIVE_VERSION', `contextfold cannot load its native binary for ${platform}: ${versionMismatch(installed)}`)
  }
  process.emitWarning(`${versionMismatch(installed)} Using the build at ${localBuild}.`, { code: 'CF_NATIVE_VERSION' })
  return localBuild
}

/** The generated loader's error (with every load error in its `cause` chain) as ours. */
function notLoaded(e) {
  if (platformPackageVersion() === undefined && !existsSync(localBuild)) return notFound(e)
  const messages = []
  for (let err = e.cause; err; err = err.cause) messages.push(err.message)
  return nativeError('CF_NATIVE_LOAD', `contextfold could not load its native binary for ${platform}: ${messages.join('; ') || e.message}`, e)
}

const direct = directPath()
// The generated loader's `require` comes last: Node reads this file's exports from the last
// `module.exports =` it finds (a re-export of binding.js's, which napi-rs lists one by one).
if (direct !== undefined) {
  try {
    module.exports = require(direct)
  } catch (e) {
    throw nativeError('CF_NATIVE_LOAD', `contextfold could not load ${direct}: ${e.message}`, e)
  }
} else {
  try {
    module.exports = require('./binding.js')
  } catch (e) {
    throw notLoaded(e)
  }
}
