// openai_node_check.mjs: the OpenAI Node SDK against `pitstop serve` with the
// built-in tiny model (scripts/openai_node_check.sh starts the server).
// Each check prints its count; the script exits 1 if any fails.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.PITSTOP_URL + "/v1", apiKey: "none" });
const model = process.env.PITSTOP_MODEL || "tiny-tools";
const N = Number(process.env.CHECK_N || 100);
const builtin = ["calculator", "current_time", "unit_convert"].map((name) => ({ type: "function", function: { name } }));
const questions = ["What is 17 times 23?", "What time is it in Tokyo?", "What is the capital of France?", "Convert 5 miles to kilometers.", "What is 144 divided by 12?"];
let failed = 0;
function check(name, ok, total, detail = "") {
  console.log(`${ok === total ? "ok  " : "FAIL"} ${name}: ${ok}/${total}${detail ? " " + detail : ""}`);
  if (ok !== total) failed++;
}
const ask = (i) => [{ role: "user", content: questions[i % questions.length] }];

// 1. stop sequences, non-stream and stream.
{
  const q = [{ role: "user", content: "What is the capital of France?" }];
  const r = await client.chat.completions.create({ model, messages: q, stop: ["France is"] });
  let ok = Number(r.choices[0].finish_reason === "stop" && !r.choices[0].message.content.includes("France is"));
  const s = await client.chat.completions.create({ model, messages: q, stop: ["France is"], stream: true });
  let text = "", finish = null, leaked = false;
  for await (const ch of s) {
    const d = ch.choices[0]?.delta?.content || "";
    if (d.includes("France") && text.includes("capital of")) leaked = true;
    text += d;
    finish = ch.choices[0]?.finish_reason || finish;
  }
  ok += Number(finish === "stop" && !text.includes("France is") && !leaked && text === r.choices[0].message.content);
  check("stop sequences (non-stream, stream)", ok, 2, JSON.stringify(text));
}

// 2. No undeclared tool call: only current_time is declared.
{
  let ok = 0;
  for (let i = 0; i < N; i++) {
    const r = await client.chat.completions.create({ model, messages: ask(i), tools: [builtin[1]], max_tokens: 80 });
    const names = [...(r.choices[0].message.tool_calls || []).map((c) => c.function.name), ...(r.pitstop?.tool_rounds || []).flatMap((x) => x.calls.map((c) => c.name))];
    ok += Number(names.every((n) => n === "current_time"));
  }
  check("no undeclared tool call returned or run", ok, N);
}

// 3. tool_choice none / required / named.
for (const [label, choice, want] of [["none", "none", null], ["required", "required", "*"], ["named unit_convert", { type: "function", function: { name: "unit_convert" } }, "unit_convert"]]) {
  let ok = 0;
  for (let i = 0; i < N; i++) {
    const r = await client.chat.completions.create({ model, messages: ask(i), tools: builtin, tool_choice: choice, max_tokens: 80 });
    const rounds = r.pitstop?.tool_rounds || [];
    const first = rounds[0]?.calls[0]?.name;
    if (want === null) ok += Number(rounds.length === 0 && !r.choices[0].message.tool_calls);
    else ok += Number(first !== undefined && (want === "*" || first === want));
  }
  check(`tool_choice ${label}`, ok, N);
}

// 4. response_format json_schema strict: parses and validates.
{
  const schema = { type: "object", properties: { city: { enum: ["Paris", "Tokyo", "London", "Berlin"] }, answer_is_number: { type: "boolean" }, tools_needed: { type: "integer" } }, required: ["city", "answer_is_number", "tools_needed"], additionalProperties: false };
  let ok = 0, bad = [];
  for (let i = 0; i < N; i++) {
    const r = await client.chat.completions.create({ model, messages: ask(i), max_tokens: 60, response_format: { type: "json_schema", json_schema: { name: "facts", schema, strict: true } } });
    try {
      const v = JSON.parse(r.choices[0].message.content);
      const keys = Object.keys(v).sort().join(",");
      if (keys === "answer_is_number,city,tools_needed" && schema.properties.city.enum.includes(v.city) && typeof v.answer_is_number === "boolean" && Number.isInteger(v.tools_needed)) ok++;
      else bad.push(r.choices[0].message.content);
    } catch { bad.push(r.choices[0].message.content); }
  }
  check("response_format json_schema strict parses and validates", ok, N, bad.length ? JSON.stringify(bad.slice(0, 2)) : "");
}

// 4b. response_format json_schema strict with free strings (the tiny model
// does not end strings on its own: the grammar closes them within
// max_tokens), and a strict client tool with free-string arguments forced
// by tool_choice.
{
  const schema = { type: "object", properties: { answer: { type: "string" }, city: { type: "string" }, steps: { type: "array", items: { type: "string" } }, sure: { type: "boolean" } }, required: ["answer", "city", "steps", "sure"], additionalProperties: false };
  let ok = 0, finished = 0, bad = [];
  for (let i = 0; i < N; i++) {
    const r = await client.chat.completions.create({ model, messages: ask(i), max_tokens: 40 + (i % 4) * 20, response_format: { type: "json_schema", json_schema: { name: "free", schema, strict: true } } });
    finished += Number(r.choices[0].finish_reason === "stop");
    try {
      const v = JSON.parse(r.choices[0].message.content);
      const keys = Object.keys(v).sort().join(",");
      if (keys === "answer,city,steps,sure" && typeof v.answer === "string" && typeof v.city === "string" && Array.isArray(v.steps) && v.steps.every((x) => typeof x === "string") && typeof v.sure === "boolean") ok++;
      else bad.push(r.choices[0].message.content);
    } catch { bad.push(r.choices[0].message.content); }
  }
  check("response_format json_schema strict, free strings, max_tokens 40-100: parses and validates", ok, N, bad.length ? JSON.stringify(bad.slice(0, 2)) : `(finish_reason stop ${finished}/${N})`);
  const weather = { type: "function", function: { name: "get_weather", description: "Current weather in a city", strict: true, parameters: { type: "object", properties: { city: { type: "string" }, country: { type: "string" } }, required: ["city", "country"], additionalProperties: false } } };
  ok = 0; bad = [];
  for (let i = 0; i < N; i++) {
    const r = await client.chat.completions.create({ model, messages: ask(i), tools: [weather], tool_choice: { type: "function", function: { name: "get_weather" } }, max_tokens: 40 + (i % 4) * 20 });
    const c = r.choices[0].message.tool_calls?.[0];
    try {
      const a = JSON.parse(c.function.arguments);
      if (r.choices[0].finish_reason === "tool_calls" && c.function.name === "get_weather" && Object.keys(a).sort().join(",") === "city,country" && typeof a.city === "string" && typeof a.country === "string") ok++;
      else bad.push(c.function.arguments);
    } catch { bad.push(`request ${i} (max_tokens ${40 + (i % 4) * 20}): ${JSON.stringify(r.choices[0])} usage ${JSON.stringify(r.usage)}`); }
  }
  check("strict tool with free-string arguments, named by tool_choice: a valid call", ok, N, bad.length ? JSON.stringify(bad.slice(0, 2)) : "");
}

// 5. Responses API: a function tool, then previous_response_id with its output.
{
  const tools = [{ type: "function", name: "get_weather", description: "Current weather in a city", parameters: { type: "object", properties: { city: { type: "string", maxLength: 40 } }, required: ["city"], additionalProperties: false }, strict: true }];
  const r1 = await client.responses.create({ model, input: "What is the weather in Paris?", tools, tool_choice: { type: "function", name: "get_weather" }, max_output_tokens: 80 });
  const call = r1.output.find((o) => o.type === "function_call");
  let ok = Number(r1.status === "completed" && call?.name === "get_weather" && typeof JSON.parse(call.arguments).city === "string");
  if (call) {
    const r2 = await client.responses.create({ model, previous_response_id: r1.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny, 21 C" }], tools, max_output_tokens: 80 });
    ok += Number(r2.status === "completed" || r2.status === "incomplete");
    const got = await client.responses.retrieve(r2.id);
    ok += Number(got.id === r2.id);
    const items = await client.responses.inputItems.list(r2.id);
    ok += Number(items.data.length === 1 && items.data[0].type === "function_call_output" && items.data[0].call_id === call.call_id);
  }
  check("responses.create with a function tool, previous_response_id, retrieve, inputItems.list", ok, 4, call ? call.arguments : "no call");
}

// 6. A streamed response's events, in the documented order.
{
  const s = await client.responses.create({ model, input: "What is 17 times 23?", tools: [{ type: "function", name: "calculator" }], stream: true });
  const types = [];
  for await (const ev of s) if (types[types.length - 1] !== ev.type || !ev.type.endsWith(".delta")) types.push(ev.type);
  const order = ["response.created", "response.in_progress"];
  let ok = Number(types[0] === order[0] && types[1] === order[1] && types[types.length - 1] === "response.completed");
  const text = types.indexOf("response.output_text.delta");
  ok += Number(text < 0 || (types[text - 2] === "response.output_item.added" && types[text - 1] === "response.content_part.added" && types[text + 1] === "response.output_text.done"));
  check("streamed response events in order", ok, 2, types.join(" "));
  // A client function call, streamed: added, argument deltas, done (with the
  // name and the whole arguments), item done, completed.
  const fn = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true }];
  const fs = await client.responses.create({ model, input: "What is the weather in Paris?", tools: fn, tool_choice: { type: "function", name: "get_weather" }, max_output_tokens: 60, stream: true });
  const evs = [];
  for await (const ev of fs) evs.push(ev);
  const kinds = evs.map((e) => e.type).filter((t, i, a) => !(t.endsWith(".delta") && a[i - 1] === t));
  const done = evs.find((e) => e.type === "response.function_call_arguments.done");
  const deltas = evs.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta).join("");
  const want = ["response.created", "response.in_progress", "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"];
  const fok = Number(JSON.stringify(kinds) === JSON.stringify(want) && done?.name === "get_weather" && done.arguments === deltas && typeof JSON.parse(done.arguments).city === "string");
  check("streamed function call events in order", fok, 1, kinds.join(" "));
}

// 7. A hosted tool pitstop does not have: a 400 naming the parameter.
{
  let ok = 0, detail = "";
  try {
    await client.responses.create({ model, input: "Search the web for pitstop.", tools: [{ type: "web_search" }] });
    detail = "accepted";
  } catch (e) {
    detail = `${e.status} ${e.param}`;
    ok = Number(e instanceof OpenAI.BadRequestError && e.param === "tools[0].type");
  }
  check("hosted tool web_search: 400 naming tools[0].type", ok, 1, detail);
}

// 8. A background response: queued at once, polled with retrieve until it
// completes; then cancel returns it as it is; an unknown parameter is a 400.
{
  const r = await client.responses.create({ model, input: "What is 17 times 23?", tools: [{ type: "function", name: "calculator" }], background: true });
  let ok = Number(r.status === "queued" && r.background === true);
  let got = r;
  for (let i = 0; i < 500 && (got.status === "queued" || got.status === "in_progress"); i++) {
    await new Promise((res) => setTimeout(res, 20));
    got = await client.responses.retrieve(r.id);
  }
  ok += Number(got.status === "completed" && got.output.length > 0);
  const c = await client.responses.cancel(r.id);
  ok += Number(c.status === "completed");
  try {
    await client.responses.create({ model, input: "hi", frobnicate: 1 });
  } catch (e) {
    ok += Number(e instanceof OpenAI.BadRequestError && e.param === "frobnicate");
  }
  check("background response: queued, polled to completed, cancel, unknown parameter 400", ok, 4, `${r.status} -> ${got.status}`);
}

process.exit(failed ? 1 : 0);
