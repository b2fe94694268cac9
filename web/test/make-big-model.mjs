// A copy of a Llama folder whose vocabulary is padded to ROWS rows, as checkpoints pad theirs (Qwen3
// has 151,936 rows for 151,669 tokens): the embedding gets zero rows after the tokenizer's ids, so
// the text is the original's while the table grows past a storage binding's limit. With tied
// embeddings the zero rows give logits of 0, which the trained model's next token outscores.
//   node make-big-model.mjs SRC_DIR ROWS OUT_DIR
import {copyFile, mkdir, readFile, writeFile} from 'node:fs/promises';

const [src, rowsText, out] = process.argv.slice(2);
const rows = Number(rowsText);
if (!out || !(rows > 0)) {
  console.error('usage: node make-big-model.mjs SRC_DIR ROWS OUT_DIR');
  process.exit(2);
}
const name = 'model.embed_tokens.weight';
const config = JSON.parse(await readFile(`${src}/config.json`, 'utf8'));
if (!config.tie_word_embeddings) throw new Error(`${src}: the padding needs tied embeddings`);
if (rows <= config.vocab_size) throw new Error(`${rows} rows is not more than the ${config.vocab_size} there are`);

const file = await readFile(`${src}/model.safetensors`);
const headerBytes = Number(file.readBigUInt64LE(0));
const header = JSON.parse(file.subarray(8, 8 + headerBytes).toString('utf8'));
const data = file.subarray(8 + headerBytes);
const embed = header[name];
if (!embed || embed.shape[0] !== config.vocab_size) throw new Error(`${src}: no ${name} of vocab_size rows`);
const rowBytes = (embed.data_offsets[1] - embed.data_offsets[0]) / embed.shape[0];

// The tensors in their order, the embedding's padded with zeros.
const names = Object.keys(header).filter((k) => k !== '__metadata__');
const outHeader = {__metadata__: header.__metadata__ || {format: 'pt'}};
const pieces = [];
let offset = 0;
for (const k of names) {
  const t = header[k];
  let bytes = data.subarray(t.data_offsets[0], t.data_offsets[1]);
  let shape = t.shape;
  if (k === name) {
    const padded = Buffer.alloc(rows * rowBytes);
    bytes.copy(padded);
    bytes = padded;
    shape = [rows, t.shape[1]];
  }
  outHeader[k] = {dtype: t.dtype, shape, data_offsets: [offset, offset + bytes.length]};
  pieces.push(bytes);
  offset += bytes.length;
}
let json = Buffer.from(JSON.stringify(outHeader), 'utf8');
json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
const length = Buffer.alloc(8);
length.writeBigUInt64LE(BigInt(json.length));

await mkdir(out, {recursive: true});
await writeFile(`${out}/model.safetensors`, Buffer.concat([length, json, ...pieces]));
await writeFile(`${out}/config.json`, JSON.stringify({...config, vocab_size: rows}, null, 2));
for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
  await copyFile(`${src}/${f}`, `${out}/${f}`).catch((e) => {
    if (e.code !== 'ENOENT') throw e;
  });
}
console.log(`${out}: ${name} [${rows}, ${embed.shape[1]}] (${config.vocab_size} rows of the tokenizer's)`);
