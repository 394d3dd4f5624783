// hfref.mjs: Hugging Face's JavaScript libraries as a reference for pitstop's
// tests. Reads a JSON array of requests on stdin, writes the JSON array of
// their answers on stdout:
//
//   {"op":"render","template":SRC,"context":{...}}       -> {"text":...} | {"error":...}
//   {"op":"encode","tokenizer":PATH,"config":PATH,"texts":[...]} -> {"ids":[[...],...]}
//   {"op":"gguf","path":PATH}                            -> {"version","metadata","tensors"}
//
// The libraries are found in $PITSTOP_HFJS (scripts/fetch_hfjs.sh installs them).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const dir = process.env.PITSTOP_HFJS;
if (!dir) {
	console.error("hfref.mjs: $PITSTOP_HFJS is not set (scripts/fetch_hfjs.sh prints it)");
	process.exit(2);
}
const require = createRequire(dir + "/package.json");
const load = async (name) => require(name); // the packages' CommonJS builds

async function answer(req) {
let out;
switch (req.op) {
	case "render": {
		const { Template } = await load("@huggingface/jinja");
		try {
			out = { text: new Template(req.template).render(req.context) };
		} catch (e) {
			out = { error: String(e.message ?? e) };
		}
		break;
	}
	case "encode": {
		const { Tokenizer } = await load("@huggingface/tokenizers");
		const tj = JSON.parse(readFileSync(req.tokenizer, "utf8"));
		const tc = req.config ? JSON.parse(readFileSync(req.config, "utf8")) : {};
		const tok = new Tokenizer(tj, tc);
		out = { ids: req.texts.map((t) => tok.encode(t, { add_special_tokens: false }).ids) };
		break;
	}
	case "gguf": {
		const { gguf } = await load("@huggingface/gguf");
		const r = await gguf(req.path, { allowLocalFile: true });
		const metadata = {};
		for (const [k, v] of Object.entries(r.metadata)) {
			metadata[k] = typeof v === "bigint" ? Number(v) : Array.isArray(v) ? v.length : v;
		}
		out = {
			metadata,
			tensors: r.tensorInfos.map((t) => ({ name: t.name, shape: t.shape.map(Number), dtype: t.dtype, offset: Number(t.offset) })),
		};
		break;
	}
	default:
		out = { error: `hfref.mjs: unknown op ${req.op}` };
}
return out;
}

const answers = [];
for (const req of JSON.parse(readFileSync(0, "utf8"))) {
	answers.push(await answer(req));
}
process.stdout.write(JSON.stringify(answers));
