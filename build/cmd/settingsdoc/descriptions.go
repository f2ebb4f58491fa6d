package main

// This file is the hand-written part of docs/settings.md: what each
// command is, and what each environment variable that is not a flag's
// default means. The generator fails when the code reads a variable that
// envDocs lacks, or when envDocs describes one that no code reads, so that
// the two cannot drift apart.

// commandDoc introduces a command's section.
type commandDoc struct {
	// Dir is the directory of its main package, or for Python the
	// argparse program's name.
	Dir string
	// Title names the command as its users run it.
	Title string
	// Intro says what it is and who runs it.
	Intro string
}

// commandDocs describe the commands, in the reference's order.
var commandDocs = []commandDoc{
	{"services/cmd/sandox", "sandox", "The CLI (`go run ./services/cmd/sandox <command>`): brings a local system up and down, and talks to it. Each subcommand has its own flags."},
	{"services/orchestrator/cmd/sandox-orchestrator", "sandox-orchestrator", "One orchestrator worker: it consumes lifecycle commands from NATS and drives the Docker engine. `sandox up` runs one in the container `sandox-orchestrator`; run more to share the work (docs/deploy.md)."},
	{"services/natsd/cmd/sandox-nats", "sandox-nats", "The NATS server with JetStream, in operator mode. `sandox up` runs it in the container `sandox-nats`."},
	{"services/data/cmd/sandox-data", "sandox-data", "The data service: answers sandboxes' database requests and populations with the clients and secrets only it holds (docs/databases.md). `sandox up` runs it in the container `sandox-data`. It has no flags; its settings are environment variables."},
	{"services/search/cmd/sandox-search", "sandox-search", "The web search service, holding the operator's provider keys (docs/tools/web_tools.md). `sandox up` runs it in the container `sandox-search`. It has no flags; its settings are environment variables."},
	{"services/dashboard/cmd/sandox-dashboard", "sandox-dashboard", "The web dashboard (docs/dashboard.md) as a service, what `sandox dashboard` serves: `sandox up` runs it in the container `sandox-dashboard`, published on `127.0.0.1:8089`. Each flag's default comes from its variable."},
	{"executor/cmd/sandox-executor", "sandox-executor", "The entrypoint of every sandbox. It has no flags."},
	{"build/cmd/sandox-bench", "sandox-bench", "The benchmark against a running system (`bash build/scripts/bench.sh`, docs/benchmarks.md)."},
	{"build/cmd/settingsdoc", "settingsdoc", "Writes this page (`go tool task settings`)."},
	{"schemas/cmd/genschema", "genschema", "Writes `schemas/jsonschema/*.schema.json` (`go tool task schemas`)."},
	{"docs/examples/agentloop", "agentloop", "The example agent loop of docs/agent-loop.md."},
	{"sdk/python/tests/natsd", "natsd (Python SDK tests)", "An embedded NATS server for the Python SDK's tests."},
	{"qdrantedge", "qdrantedge", "The Qdrant-compatible gRPC service on Qdrant Edge (`services/qdrantedge`, docs/qdrant-edge.md), the image of the groups' vector databases. The orchestrator starts it; each flag's default comes from its variable."},
}

// component groups environment variables in the reference.
type component struct {
	Key, Title, Intro string
	// Dir, when set, is the command that reads them (commandDocs' Dir):
	// its section lists them, and when `sandox up` starts it the
	// reference says how a user of `sandox up` sets each.
	Dir string
}

// components are the groups of environment variables, in order.
var components = []component{
	{Key: "cli", Title: "sandox", Dir: "services/cmd/sandox", Intro: "Read by `sandox` subcommands."},
	{Key: "data", Title: "sandox-data", Dir: "services/data/cmd/sandox-data", Intro: "The data service's settings, besides the NATS connection."},
	{Key: "search", Title: "sandox-search", Dir: "services/search/cmd/sandox-search", Intro: "The search service's settings (`services/search/config.go`), besides the NATS connection. Each key may instead come from a file named by the variable with `_FILE` appended (a mounted secret)."},
	{Key: "executor", Title: "sandox-executor", Dir: "executor/cmd/sandox-executor", Intro: "The executor's environment in every sandbox, one typed contract (`schemas.ExecutorEnv`): the orchestrator fills it in, the executor reads it back. Users set these through the orchestrator's flags and the group and sandbox specs, never directly."},
	{Key: "nats", Title: "NATS connection", Intro: "Read by the clients (the Python SDK, the Go SDK and through it the `sandox` CLI), by the control-plane services `sandox-data`, `sandox-search` and `sandox-dashboard`, and by the executor."},
	{Key: "client", Title: "Clients", Intro: "Read by the SDKs to find their configuration directory (`~/.config/sandox`)."},
	{Key: "tools", Title: "Tools in a sandbox", Intro: "Read inside a sandbox by the executor and its tools."},
	{Key: "scripts", Title: "Scripts", Intro: "Variables the scripts under `build/scripts` honour, with their defaults there."},
	{Key: "examples", Title: "Examples", Intro: "Read by the example programs under `docs/examples`."},
	{Key: "tests", Title: "Tests", Intro: "Read by the tests only."},
}

// envDoc describes an environment variable.
type envDoc struct {
	Component string
	Text      string
}

// envDocs describe every environment variable the code reads, except one
// that is only a flag's default (the flag's usage describes it).
var envDocs = map[string]envDoc{
	"SANDOX_NATS_URL":   {"nats", "NATS URL, or a comma-separated list of a cluster's; default `nats://127.0.0.1:4222`. The executor requires it (`unix:///path` dials a Unix socket, how sandboxes reach NATS; the orchestrator sets it from `-sandbox-nats`) and retries until it connects. Clients use it when given no URL: the Go SDK (`sdk.DefaultURL`), the Python SDK (`default_url`) and the `-nats` flags of `sandox`."},
	"SANDOX_NATS_CREDS": {"nats", "NATS credentials file. Clients default to `~/.config/sandox/client.creds` when it is unset and that file exists; the orchestrator sets each sandbox's own (`/run/sandox/nats.creds`)."},

	"SANDOX_NEO4J_PASSWORD_FILE": {"data", "File with the neo4j user's password of the groups' Neo4j (the orchestrator's `-neo4j-password-file` binds the same secret into every Neo4j)."},
	"SANDOX_NEO4J_ADDR":          {"data", "host:port of a Neo4j shared by every group that has none of its own."},
	"SANDOX_QDRANT_ADDR":         {"data", "host:port of a Qdrant shared by every group that has none of its own."},
	"SANDOX_POPULATE_DIR":        {"data", "Directory that relative local population sources resolve in (`sandox up`: `/var/lib/sandox/populate` on the host, bound read-only)."},
	"SANDOX_POPULATE_ALLOW":      {"data", "Comma-separated hosts, `*.domains`, addresses and CIDRs that http(s) and s3 population sources may reach; none when unset."},
	"SANDOX_EMBED_URL":           {"data", "OpenAI-compatible embeddings endpoint; unset, the data service embeds with its offline hashing embedder."},
	"SANDOX_EMBED_MODEL":         {"data", "Model name sent to `SANDOX_EMBED_URL`."},
	"SANDOX_EMBED_KEY":           {"data", "Bearer key of `SANDOX_EMBED_URL`; it stays in the control plane."},
	"SANDOX_EMBED_DIM":           {"data", "Dimension of the endpoint's vectors."},

	"SANDOX_SEARCH_PROVIDER":            {"search", "Provider of requests that name none: `brave`, `google` or `searxng`; default the first configured (brave when none is)."},
	"SANDOX_SEARCH_BRAVE_API_KEY":       {"search", "Brave Search API key."},
	"SANDOX_SEARCH_BRAVE_API_KEY_FILE":  {"search", "File holding the Brave key, when `SANDOX_SEARCH_BRAVE_API_KEY` is unset."},
	"SANDOX_SEARCH_BRAVE_ENDPOINT":      {"search", "Brave endpoint instead of the public one."},
	"SANDOX_SEARCH_GOOGLE_API_KEY":      {"search", "Google Programmable Search API key."},
	"SANDOX_SEARCH_GOOGLE_API_KEY_FILE": {"search", "File holding the Google key, when `SANDOX_SEARCH_GOOGLE_API_KEY` is unset."},
	"SANDOX_SEARCH_GOOGLE_CX":           {"search", "Google search engine id (cx)."},
	"SANDOX_SEARCH_GOOGLE_ENDPOINT":     {"search", "Google endpoint instead of the public one."},
	"SANDOX_SEARCH_SEARXNG_URL":         {"search", "Base URL of a SearXNG instance."},
	"SANDOX_SEARCH_QUOTA_PER_MINUTE":    {"search", "Searches a minute per sandbox, per instance of the service; default 30, 0 for no quota."},
	"SANDOX_SEARCH_QUOTA_BURST":         {"search", "Searches a sandbox may make at once above the rate; default 10, at least 1."},

	"SANDOX_SANDBOX_ID":      {"executor", "The sandbox it serves (`sandbox.<id>.>`); required."},
	"SANDOX_GROUP_ID":        {"executor", "The sandbox's group; every log line of the executor carries it as `group`."},
	"SANDOX_TOOL_FAMILIES":   {"executor", "The built-in tool families to serve, comma-separated (docs/tools/families.md); default `filesystem_tools,terminal_tools`; an unknown name stops the executor. From the sandbox spec."},
	"SANDOX_EGRESS_PROXY":    {"executor", "Unix socket of the sandbox's allowlist proxy; the executor forwards `127.0.0.1:3128` to it (docs/security.md). From the sandbox's egress policy."},
	"SANDOX_TOOLS_DIR":       {"executor", "Where the user's `*.py` tool files are; default `/opt/sandox/tools`."},
	"SANDOX_WORKSPACE":       {"executor", "Working directory of terminal sessions, and the directory whose disk the executor watches; default `/workspace`."},
	"SANDOX_WEBHOOKS":        {"executor", "The URL prefixes jobs' webhooks may name, comma-separated, from the orchestrator's `-webhook-allow`: `start_job` refuses any other at once."},
	"SANDOX_STREAM_BYTES":    {"executor", "The sandbox's stream budget in bytes (0: none), from the orchestrator's `-stream-budget`: the job output and watch events it may put into JetStream, after which each job and watch ends in a `truncated` record."},
	"SANDOX_DISK_BYTES":      {"executor", "The workspace's disk limit in bytes (0: none), from the sandbox's resources; with one, the executor reports a full disk in `limits_hit` and measures use with `statfs` instead of walking the workspace."},
	"SANDOX_CGROUP_ROOT":     {"executor", "Where the executor reads its cgroup's `oom_kill` and `pids.events` counters (v1 or v2 layout); default `/sys/fs/cgroup`. The orchestrator does not set it."},
	"SANDOX_PACKAGE_INDEX":   {"executor", "Package source for `uv` and `pip`, from the sandbox's egress policy (`package_index`, docs/security.md): an `http(s)://` URL becomes `UV_DEFAULT_INDEX` and `PIP_INDEX_URL` (`PIP_TRUSTED_HOST` too for `http`), anything else a wheel directory used offline (`UV_FIND_LINKS`, `UV_OFFLINE=1`, `PIP_FIND_LINKS`, `PIP_NO_INDEX=1`)."},
	"SANDOX_DEBUG":           {"executor", "Any value turns on debug logging. The orchestrator does not set it."},
	"SANDOX_POOLED":          {"executor", "Set on a warm pool's sandboxes: the executor waits to be claimed (docs/pools.md)."},
	"SANDOX_WATCH_WORKSPACE": {"executor", "Set on the sandboxes of a group with automatic checkpoints: the executor says after each batch whether it changed the workspace (docs/checkpoints.md)."},
	"GOMAXPROCS":             {"tools", "The executor runs with one P unless this is set."},

	"HTTPS_PROXY": {"tools", "The web tools' browser uses the first of `HTTPS_PROXY`, `https_proxy`, `HTTP_PROXY`, `http_proxy` as its proxy (the orchestrator sets them on a sandbox with an allowlist egress policy)."},
	"https_proxy": {"tools", "See `HTTPS_PROXY`."},
	"HTTP_PROXY":  {"tools", "See `HTTPS_PROXY`."},
	"http_proxy":  {"tools", "See `HTTPS_PROXY`."},
	"NO_PROXY":    {"tools", "Hosts the web tools' browser reaches without its proxy (`no_proxy` too)."},
	"no_proxy":    {"tools", "See `NO_PROXY`."},

	"SANDOX_MCP_TOKEN":       {"cli", "Bearer token of `sandox mcp --http`; when set, it takes precedence over `-token-file` (docs/mcp.md)."},
	"SANDOX_METRICS_TOKEN":   {"cli", "Token of `sandox metrics`: required on a non-loopback address, optional on loopback; when set, it takes precedence over `-token-file` and `~/.config/sandox/metrics.token` (docs/metrics.md)."},
	"SANDOX_OTLP_ENDPOINT":   {"cli", "OTLP/HTTP receiver that `sandox metrics` and `sandox dashboard` push the metrics to when `-otlp-endpoint` is not given (`http://HOST:4318`, or a full URL); unset: no push (docs/metrics.md)."},
	"SANDOX_DASHBOARD_TOKEN": {"cli", "Token of `sandox dashboard` and of `sandox-dashboard`: required on a non-loopback address, optional on loopback; when set, it takes precedence over `-token-file` and `~/.config/sandox/dashboard.token` (docs/dashboard.md)."},

	"XDG_CONFIG_HOME": {"client", "The Python SDK's configuration directory is `$XDG_CONFIG_HOME/sandox` (Go's `os.UserConfigDir`, which the Go SDK uses, reads it too)."},
	"AppData":         {"client", "On Windows, the Python SDK's configuration directory is under it."},

	"SANDOX_BASE_IMAGE":        {"scripts", "Name of the base image (`base-image.sh`; the Go builder passes `sandox/base:bookworm`)."},
	"SANDOX_SKIP_PULL":         {"scripts", "`1`: do not try `docker pull` for the base image; go straight to mmdebstrap."},
	"SANDOX_DEBIAN_MIRROR":     {"scripts", "Debian mirror for mmdebstrap, instead of the one in the apt sources."},
	"SANDOX_DOCKERD_LOG":       {"scripts", "Where a `dockerd` started by `engine.sh` logs."},
	"SANDOX_BENCH_VENV":        {"scripts", "Virtual environment with llm-sandbox for `bench.sh`'s peer run."},
	"SANDOX_DOCKER2_HOST":      {"scripts", "Socket of the second Docker engine that `engine2.sh` starts, and that the multi-host tests use."},
	"SANDOX_DOCKER2_ROOT":      {"scripts", "Data root of the second engine."},
	"SANDOX_DOCKER2_EXEC_ROOT": {"scripts", "Exec root of the second engine."},
	"SANDOX_DOCKER2_BRIDGE":    {"scripts", "Bridge of the second engine."},
	"SANDOX_DOCKER2_BRIDGE_IP": {"scripts", "Address of that bridge."},
	"SANDOX_DOCKER2_POOLS":     {"scripts", "Default address pools of the second engine."},
	"SANDOX_DOCKER2_IMAGES":    {"scripts", "Images loaded into the second engine."},
	"SANDOX_DOCKERD2_LOG":      {"scripts", "Where the second engine logs."},
	"XDG_CACHE_HOME":           {"scripts", "Cache directory under which `neo4j-jars.sh` keeps the Neo4j jars (`sandox/neo4j/lib`), where `build.DefaultConfig` looks too."},
	"IMAGE":                    {"scripts", "Image of `egress-density.sh`'s containers."},
	"SUBNET":                   {"scripts", "Address range of `egress-density.sh`'s bridges."},

	"OPENAI_API_KEY":    {"examples", "Key of the OpenAI provider of `agentloop`."},
	"OPENAI_BASE_URL":   {"examples", "OpenAI-compatible endpoint of `agentloop`."},
	"ANTHROPIC_API_KEY": {"examples", "Key of the Anthropic provider of `agentloop`."},

	"CI":                        {"tests", "Set in CI: tests that would skip for a missing dependency fail instead."},
	"DOCKER_HOST":               {"tests", "The Docker engine the multi-host tests treat as the first (the Docker client reads it everywhere)."},
	"SANDOX_MULTIHOST_LOGS":     {"tests", "Keep the multi-host test's process logs when it passes."},
	"SANDOX_QDRANT_URL":         {"tests", "Run the Qdrant compatibility test against this Qdrant instead of a qdrant-edge container."},
	"SANDOX_QDRANT_API_KEY":     {"tests", "API key of `SANDOX_QDRANT_URL`."},
	"SANDOX_TEST_QDRANT":        {"tests", "host:port of a Qdrant for the data service's unit tests (skipped without it)."},
	"SANDOX_TEST_RUN_MAIN":      {"tests", "Makes the `sandox` test binary run `sandox` itself (the MCP tests start it as a subprocess)."},
	"SANDOX_IT":                 {"tests", "`1`: the Python SDK's integration tests run (integration/python_test.go sets it)."},
	"SANDOX_IT_FORMATS":         {"tests", "Directory of the tool formats the Python walkthrough compares with the Go SDK's."},
	"SANDOX_IT_FORMATS_SANDBOX": {"tests", "Sandbox whose tools the Python walkthrough reads for that comparison."},
}
