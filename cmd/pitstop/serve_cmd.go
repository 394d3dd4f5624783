package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/api"
	"github.com/pitstop-llm/pitstop/runtime/testmodel"
	"github.com/pitstop-llm/pitstop/tools"
)

func init() { subcommands = append(subcommands, newServeCmd) }

// loopbackAddr reports whether a listen address only accepts local connections.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type serveFlags struct {
	serveModelFlags
	lifecycleFlags
	addr, policy                  string
	apiKeys, adminKeys            []string
	apiKeysFile                   string
	tenantLimits                  runtime.TenantLimits
	metricsPublic                 bool
	webhookAllow                  []string
	webhookMaxTimeout             time.Duration
	webhookMaxResponse            int64
	anonymousTTL                  time.Duration
	strictToolCalls               bool
	offerTools                    string
	constrainToolCalls            bool
	httpAllow                     []string
	httpAllowPrivate              bool
	allowRegistration             bool
	webhookPublicOnly             bool
	maxToolRounds                 int
	toolTimeout, programTTL       time.Duration
	maxBody                       int64
	tracePath, durationsPath      string
	learn                         predictorLearnFlags
	logLevel                      string
	cpuProfile, execTrace         string
	shutdownTimeout, saveInterval time.Duration
	lengthPredictor               string
	mcp                           mcpFlags
	backend                       backendFlags
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a model with the OpenAI-compatible API, running the tools it calls itself (default: the built-in tiny tool-calling model on the CPU)",
		Long: `serve runs pitstop's OpenAI-compatible server: POST /v1/chat/completions (stream and
non-stream, tools, tool_choice, parallel tool calls, temperature/top_p/seed), GET /v1/models,
GET/POST /v1/tools, POST /v1/tools/{name}/invoke, GET /v1/programs, GET /healthz, GET /metrics
(Prometheus). A go-openai client works by changing only its base URL to http://ADDR/v1.

WHAT IS SERVED. By default (--model builtin:tiny-tools) a real model: pitstop's built-in
1M-parameter Llama-architecture tool-calling model, trained by pitstop on generated
dialogues over the built-in tools (calculator, current_time, unit_convert). It runs on the
CPU executor (models/cpu): a real batched forward pass over the engine's paged KV cache,
greedy decoding unless a request sets temperature, and real swaps of KV blocks to a
host-memory tier. It is a demonstration model: it knows its three tools, 48 cities and its
corpus's phrasings, nothing else. --model DIR serves a Hugging Face Llama, Qwen2 or Mistral
directory the same way (float32 on the CPU: small models only; --load-format dummy for
random weights). --model ` + scriptedModelFlag + ` serves the SCRIPTED TEST MODEL ("` + testmodel.Name + `"),
which answers by fixed rules on the simulated executor paced on the real clock (--profile,
--pace): for tests, not for answers.

Whatever the model, its tokens go through the same path: the engine schedules them, the
streaming detokenizer and the chat template's tool-call parser read them, a tool call
pauses the call, the policy decides whether its KV is preserved, swapped to host memory or
discarded while the tool runs, registered tools run server-side and generation resumes.
Each server-side tool round, with that decision and why, is in the response's "pitstop"
field (non-stream) and in a "pitstop" chunk of the stream.

Tools: calculator, current_time and unit_convert are built in; http_get is enabled by
--tools-http-allow; webhook tools can be registered at run time (POST /v1/tools). A tool
the client declares in "tools" runs server-side when it is registered (a declaration whose
parameters name other properties or types than the registered tool's is a 400 naming the
clash); otherwise it goes back to the client as
tool_calls. Program identity: headers X-Pitstop-Program,
X-Pitstop-Thread, X-Pitstop-Parents.

TENANTS. API keys (Bearer) come from --api-key, --admin-key, --api-keys-file and
$` + api.EnvAPIKeys + ` (comma-separated); with none configured the server is open and has one
tenant. Each key belongs to a tenant: a line of the keys file is
  KEY [tenant=NAME] [admin] [max-tools=N] [max-concurrent=N] [tokens-per-s=X]
and a key without tenant= is a tenant of its own. A tenant's webhook tools and programs are
its own (others cannot list, call, replace or read them; the same name in two tenants is two
tools or programs); admin keys see every tenant's and read /metrics. Limits (--tenant-*
defaults, per tenant in the keys file) answer 429 with Retry-After, and the engine shares
its time between tenants by their recent attained service. SIGHUP reloads the keys file
without dropping calls. With API keys or a listen address beyond loopback, webhook tools may
not reach loopback, private, link-local or metadata addresses unless --webhook-allow names
them (checked when each connection is dialled). See docs/security.md.

ROUTER. With --backend URL (or --backend-dns) serve runs no model: every call goes to one of
those OpenAI-compatible servers (vLLM, SGLang, llama.cpp, other pitstops), picked by --balancer;
tools, programs, tenants and the API stay pitstop's; GET/POST/DELETE /v1/backends manage them at
run time. A router collects garbage at GOGC=400 under a soft memory limit of three quarters
of the memory it may use (GOGC and GOMEMLIMIT in the environment override either). See docs/router.md.

Policies: ` + strings.Join(policy.Names(), ", ") + ` (the prefix cache is always on)
Profiles (` + scriptedModelFlag + `): ` + strings.Join(sim.ProfileNames(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(f, cmd.Flags().Changed)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address")
	fl.StringVar(&f.policy, "policy", runtime.DefaultPolicy, "scheduling policy")
	addServeModelFlags(fl, &f.serveModelFlags)
	addLifecycleFlags(fl, &f.lifecycleFlags)
	fl.StringSliceVar(&f.apiKeys, "api-key", nil, "accepted API key (repeatable, or comma-separated)")
	fl.StringVar(&f.apiKeysFile, "api-keys-file", "", "file of accepted API keys, one a line: KEY [tenant=NAME] [admin] [max-tools=N] [max-concurrent=N] [tokens-per-s=X] (reloaded on SIGHUP)")
	fl.StringSliceVar(&f.adminKeys, "admin-key", nil, "API key of the admin (sees every tenant's programs and tools, reads /metrics; repeatable)")
	fl.IntVar(&f.tenantLimits.MaxTools, "tenant-max-tools", 64, "webhook tools one tenant may register (0: no limit)")
	fl.IntVar(&f.tenantLimits.MaxConcurrent, "tenant-max-concurrent", 256, "chat calls and tool invokes one tenant may have in flight (0: no limit)")
	fl.Float64Var(&f.tenantLimits.TokensPerSecond, "tenant-tokens-per-s", 0, "prompt+completion tokens per second one tenant may use, averaged over 10 s (0: no limit)")
	fl.BoolVar(&f.metricsPublic, "metrics-public", false, "serve /metrics without an API key (by default, with keys configured, only admin keys read it)")
	fl.StringSliceVar(&f.webhookAllow, "webhook-allow", nil, "CIDRs webhook tools may reach although they are loopback, private or link-local (e.g. 10.1.2.0/24,127.0.0.1/32)")
	fl.DurationVar(&f.webhookMaxTimeout, "webhook-max-timeout", tools.DefaultWebhookMaxTimeout, "largest timeout a webhook tool may ask for (its timeout_s); no webhook call runs longer")
	fl.Int64Var(&f.webhookMaxResponse, "webhook-max-response-bytes", tools.DefaultWebhookMaxResponseBytes, "largest webhook answer read")
	fl.BoolVar(&f.strictToolCalls, "strict-tool-calls", false, "run a tool call only when the model wrote the template's tool-call marker as its own token; with a template whose format has no marker token (e.g. Llama 3.1 JSON calls) the model then calls no tools (docs/tool-call-provenance.md)")
	fl.StringVar(&f.offerTools, "offer-tools", string(runtime.OfferDeclared), "tools a call offers the model: declared (those its request declares) or registered (also every registered server-side tool, declared or not; it changes the prompt)")
	fl.BoolVar(&f.constrainToolCalls, "constrain-tool-calls", false, "decode every tool call under the grammar of the offered tools' names and parameters (as tools with strict: true always are): a call always names an offered tool with schema-valid arguments")
	fl.DurationVar(&f.anonymousTTL, "anonymous-program-ttl", runtime.DefaultAnonymousProgramTTL, "how long the program row of a call without X-Pitstop-Program stays after the call")
	fl.StringSliceVar(&f.httpAllow, "tools-http-allow", nil, "enable the http_get tool for these hosts (e.g. example.com,*.wikipedia.org)")
	fl.BoolVar(&f.httpAllowPrivate, "tools-http-allow-private", false, "let http_get reach loopback and private addresses")
	fl.BoolVar(&f.allowRegistration, "allow-tool-registration", true, "allow registering webhook tools at run time (POST /v1/tools); off beyond loopback unless API keys are set")
	fl.BoolVar(&f.webhookPublicOnly, "webhook-public-only", false, "refuse webhook tools on loopback, private and link-local addresses")
	fl.IntVar(&f.maxToolRounds, "max-tool-rounds", runtime.DefaultMaxToolRounds, "server-side tool rounds allowed in one call (loop guard)")
	fl.DurationVar(&f.toolTimeout, "tool-timeout", tools.DefaultTimeout, "default timeout of one tool call")
	fl.DurationVar(&f.programTTL, "program-ttl", runtime.DefaultProgramTTL, "how long an idle program stays in the program table")
	fl.Int64Var(&f.maxBody, "max-body", api.DefaultMaxBodyBytes, "largest request body in bytes")
	fl.StringVar(&f.tracePath, "trace", "", "append a JSONL trace record per call segment (predictor training data) to this file")
	fl.StringVar(&f.durationsPath, "durations", "", "tool-duration statistics file: loaded at start when it exists, saved periodically and at exit")
	fl.DurationVar(&f.saveInterval, "durations-save-every", time.Minute, "how often to save --durations")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "debugging: write a CPU profile of the whole run to this file, closed when serve ends (go tool pprof)")
	fl.StringVar(&f.execTrace, "exectrace", "", "debugging: write an execution trace of the whole run to this file, closed when serve ends (go tool trace: collections, scheduler latency, blocking)")
	fl.StringVar(&f.lengthPredictor, "predictor", runtime.LengthONNX, "output-length predictor of each call segment: onnx (the served model's own length.onnx when its directory has one, as builtin:tiny-tools does, else the default model in predictor/data; through ONNX Runtime: $PITSTOP_ORT_LIB or scripts/fetch_ort.sh's cache; without it, history, said in the log and /metrics), history (the program's mean so far), or the path of an ONNX length model")
	addPredictorLearnFlags(fl, &f.learn)
	addMCPFlags(fl, &f.mcp)
	addBackendFlags(fl, &f.backend)
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long to let calls in flight finish on SIGINT/SIGTERM")
	return cmd
}

func runServe(f serveFlags, changed func(string) bool) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usagef("invalid --log-level %q (valid: debug, info, warn, error)", f.logLevel)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if _, err := policy.New(f.policy, policy.Options{}); err != nil {
		return usageError{err.Error()}
	}
	switch {
	case f.maxToolRounds < 1:
		return usagef("invalid --max-tool-rounds %d: must be >= 1", f.maxToolRounds)
	case f.toolTimeout <= 0 || f.programTTL <= 0 || f.maxBody <= 0 || f.anonymousTTL <= 0:
		return usagef("--tool-timeout, --program-ttl, --anonymous-program-ttl and --max-body must be positive")
	case f.webhookMaxTimeout <= 0 || f.webhookMaxResponse <= 0:
		return usagef("--webhook-max-timeout and --webhook-max-response-bytes must be positive")
	case f.tenantLimits.MaxTools < 0 || f.tenantLimits.MaxConcurrent < 0 || f.tenantLimits.TokensPerSecond < 0:
		return usagef("--tenant-max-tools, --tenant-max-concurrent and --tenant-tokens-per-s must not be negative")
	}
	// Flags whose values are parsed later are checked now, before anything
	// starts: bad input is one line and exit status 2.
	if err := f.learn.check(); err != nil {
		return err
	}
	if _, err := f.mcp.specs(nil); err != nil {
		return usageError{err.Error()}
	}
	if _, err := tools.ParseAllowList(strings.Join(f.webhookAllow, ",")); err != nil {
		return usagef("--webhook-allow: %v", err)
	}
	backends, backendDNS, err := f.backend.specs(changed)
	if err != nil {
		return err
	}
	keys, err := api.LoadAPIKeys(f.apiKeys, f.adminKeys, f.apiKeysFile)
	if err != nil {
		return usageError{err.Error()}
	}
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startExecTrace(f.execTrace)
	if err != nil {
		return err
	}
	defer stopTrace()

	reg := tools.NewRegistry()
	bcfg := tools.BuiltinConfig{}
	if len(f.httpAllow) > 0 {
		bcfg.HTTPGet = &tools.HTTPGetConfig{AllowedHosts: f.httpAllow,
			Policy: tools.DialPolicy{AllowLoopback: f.httpAllowPrivate, AllowPrivate: f.httpAllowPrivate}}
	}
	if err := tools.RegisterBuiltins(reg, bcfg); err != nil {
		return usageError{err.Error()}
	}

	durations := predictor.NewDurationEstimator(predictor.DurationOptions{})
	if f.durationsPath != "" {
		if d, err := predictor.LoadDurations(f.durationsPath); err == nil {
			durations = d
			log.Info("loaded tool-duration statistics", "file", f.durationsPath, "tools", len(d.Tools()))
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--durations: %w", err)
		}
	}
	var trace io.Writer
	if f.tracePath != "" {
		tf, err := os.OpenFile(f.tracePath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		defer tf.Close()
		trace = tf
	}

	offer, err := runtime.ParseOfferTools(f.offerTools)
	if err != nil {
		return usagef("%v", err)
	}
	rcfg := runtime.Config{
		OfferTools: offer, ConstrainToolCalls: f.constrainToolCalls,
		Policy: f.policy, Tools: reg,
		ToolExecutor: tools.ExecutorConfig{DefaultTimeout: f.toolTimeout, Logger: log},
		Durations:    durations, MaxToolRounds: f.maxToolRounds, ProgramTTL: f.programTTL, AnonymousProgramTTL: f.anonymousTTL,
		StrictToolCalls: f.strictToolCalls,
		Trace:           trace, Logger: log,
	}
	var served servedModel
	if f.backend.routing() {
		stopRouter, err := f.backend.apply(backends, backendDNS, &rcfg, log)
		if err != nil {
			return err
		}
		defer stopRouter()
		applyRouterGC(log)
		served = servedModel{description: "no model: a router over " + backendNames(append(backends, backendDNS...)), executor: "remote"}
	} else if served, err = f.serveModelFlags.apply(&rcfg, changed); err != nil {
		return err
	}
	length, err := runtime.LoadLengthFor(f.lengthPredictor, served.dir)
	if err != nil {
		return usagef("--predictor: %v", err)
	}
	defer length.Close()
	f.learn.apply(length, log)
	rcfg.Length = length
	rt, err := runtime.New(rcfg)
	if err != nil {
		return err
	}
	if f.allowRegistration && keys.Len() == 0 && !loopbackAddr(f.addr) {
		// An open server on a reachable address must not let anyone add tools
		// that the model will call: registration needs an API key there.
		log.Warn("webhook tool registration disabled: the server listens beyond loopback without API keys", "addr", f.addr)
		f.allowRegistration = false
	}
	acfg := api.Config{Runtime: rt, Keys: keys, TenantDefaults: f.tenantLimits, MetricsPublic: f.metricsPublic,
		MaxBodyBytes: f.maxBody, AllowToolRegistration: f.allowRegistration, Logger: log,
		WebhookLimits: tools.WebhookLimits{MaxTimeout: f.webhookMaxTimeout, MaxResponseBytes: f.webhookMaxResponse}}
	if acfg.WebhookPolicy, err = webhookPolicy(f, keys.Len() > 0); err != nil {
		rt.Close()
		return err
	}
	if keys.Len() > 0 && !keys.HasAdmin() && !f.metricsPublic {
		log.Warn("/metrics is served to admin keys only and none is configured: set --admin-key or --metrics-public")
	}
	acfg.BodyReadTimeout = f.readTimeout
	stopMCP, err := startMCP(f.mcp, reg, &acfg, log)
	if err != nil {
		rt.Close()
		return err
	}
	defer stopMCP()
	srv, err := api.New(acfg)
	if err != nil {
		rt.Close()
		return err
	}
	if f.apiKeysFile != "" {
		stopReload := reloadKeysOnHUP(f, srv, log)
		defer stopReload()
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		rt.Close()
		return fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	log.Info("pitstop serving", "addr", "http://"+ln.Addr().String()+"/v1", "model", rt.Model().Name(),
		"executor", served.executor, "served", served.description, "policy", f.policy, "predictor", length.Describe(),
		"tools", strings.Join(reg.Names(), ","), "auth", keys.Len() > 0, "tenants", len(keys.Tenants()))
	return serveUntilSignal(ln, srv.Handler(), rt, f, durations, log)
}
