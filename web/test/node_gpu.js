// Prepended to the WebAssembly op tests (web/CMakeLists.txt): under Node.js their WebGPU is the
// `webgpu` package's Dawn binding. WGX_DAWN_NODE names its dawn.node; WGX_DAWN_FLAGS holds Dawn's
// flags (e.g. enable-dawn-features=...), separated by spaces.
// The wasm is read from disk here: this Emscripten's loader would fetch() a file path.
Module['wasmBinary'] = require('fs').readFileSync(__filename.replace(/\.c?js$/, '.wasm'));
Module['gpu'] = (function() {
  var addon = process.env['WGX_DAWN_NODE'];
  if (!addon) throw new Error('WGX_DAWN_NODE is not set: point it at the webgpu package\'s dawn.node');
  var dawn = require(addon);
  Object.assign(globalThis, dawn.globals);
  var flags = (process.env['WGX_DAWN_FLAGS'] || '').split(' ').filter(function(f) { return f; });
  return dawn.create(flags);
})();
