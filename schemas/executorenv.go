package schemas

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The environment variables of the executor, as the orchestrator sets them
// on a sandbox container. ExecutorEnv writes and reads them; no other code
// spells these names.
const (
	EnvSandboxID      = "SANDOX_SANDBOX_ID"
	EnvGroupID        = "SANDOX_GROUP_ID"
	EnvNATSURL        = "SANDOX_NATS_URL"
	EnvNATSCreds      = "SANDOX_NATS_CREDS"
	EnvEgressProxy    = "SANDOX_EGRESS_PROXY"
	EnvFamilies       = "SANDOX_TOOL_FAMILIES"
	EnvToolsDir       = "SANDOX_TOOLS_DIR"
	EnvWorkspace      = "SANDOX_WORKSPACE"
	EnvPackageIndex   = "SANDOX_PACKAGE_INDEX"
	EnvDiskBytes      = "SANDOX_DISK_BYTES"
	EnvCgroupRoot     = "SANDOX_CGROUP_ROOT"
	EnvDebug          = "SANDOX_DEBUG"
	EnvPooled         = "SANDOX_POOLED"
	EnvStreamBytes    = "SANDOX_STREAM_BYTES"
	EnvWebhooks       = "SANDOX_WEBHOOKS"
	EnvWatchWorkspace = "SANDOX_WATCH_WORKSPACE"
)

// The defaults of ExecutorEnv's optional fields.
const (
	DefaultToolsDir   = "/opt/sandox/tools"
	DefaultWorkspace  = "/workspace"
	DefaultCgroupRoot = "/sys/fs/cgroup"
)

// ExecutorEnv is the contract between the orchestrator and the executor in a
// sandbox container: the orchestrator fills it in and passes Environ() as
// the container's environment; the executor's main reads it back with
// FromEnv.
type ExecutorEnv struct {
	// SandboxID is the sandbox the executor serves (required).
	SandboxID string
	// GroupID is the sandbox's group; the executor tags its logs with it.
	GroupID string
	// NATSURL is where the executor reaches NATS (required).
	NATSURL string
	// NATSCreds is a NATS credentials file, if any.
	NATSCreds string
	// EgressProxy is the Unix socket of the sandbox's allowlist proxy,
	// which the executor forwards from a loopback port; "" for none.
	EgressProxy string
	// Families are the built-in tool families the executor serves. Empty
	// means the default families (filesystem_tools, terminal_tools).
	Families []string
	// ToolsDir holds the user's Python tool files; DefaultToolsDir when
	// empty.
	ToolsDir string
	// Workspace is the sandbox's writable working directory;
	// DefaultWorkspace when empty.
	Workspace string
	// PackageIndex is where uv and pip find packages (Egress.PackageIndex):
	// an http(s) index URL or a wheel directory; "" for their default.
	PackageIndex string
	// DiskBytes is the workspace's disk limit in bytes; 0 means none.
	DiskBytes int64
	// CgroupRoot is where the sandbox's cgroup is mounted;
	// DefaultCgroupRoot when empty.
	CgroupRoot string
	// Debug turns on debug logging.
	Debug bool
	// Pooled makes the executor a pooled one: under SandboxID (a pool id)
	// it serves only ClaimSubject and ping until it is claimed, then serves
	// the claimed sandbox (PoolClaim).
	Pooled bool
	// StreamBytes is the sandbox's stream budget: how many bytes of job
	// output and watch events its executor may put into JetStream in its
	// life, after which each job and watch ends in a truncated record; 0
	// means no limit.
	StreamBytes int64
	// Webhooks are the URL prefixes a job's webhook may name
	// (WebhookAllowed), the operator's allowlist: start_job refuses any
	// other at once. Empty refuses every webhook.
	Webhooks []string
	// WatchWorkspace makes the executor tell, in each BatchResult, whether
	// the batch changed the workspace (a group with automatic checkpoints).
	WatchWorkspace bool
}

// Environ returns the environment, KEY=VALUE, that FromEnv reads back as
// e. Fields at their zero value are left out.
func (e ExecutorEnv) Environ() []string {
	var out []string
	add := func(key, value string) {
		if value != "" {
			out = append(out, key+"="+value)
		}
	}
	add(EnvSandboxID, e.SandboxID)
	add(EnvGroupID, e.GroupID)
	add(EnvNATSURL, e.NATSURL)
	add(EnvNATSCreds, e.NATSCreds)
	add(EnvEgressProxy, e.EgressProxy)
	add(EnvFamilies, strings.Join(e.Families, ","))
	add(EnvToolsDir, e.ToolsDir)
	add(EnvWorkspace, e.Workspace)
	add(EnvPackageIndex, e.PackageIndex)
	if e.DiskBytes != 0 {
		add(EnvDiskBytes, strconv.FormatInt(e.DiskBytes, 10))
	}
	add(EnvCgroupRoot, e.CgroupRoot)
	if e.Debug {
		add(EnvDebug, "1")
	}
	if e.Pooled {
		add(EnvPooled, "1")
	}
	add(EnvWebhooks, strings.Join(e.Webhooks, ","))
	if e.StreamBytes != 0 {
		add(EnvStreamBytes, strconv.FormatInt(e.StreamBytes, 10))
	}
	if e.WatchWorkspace {
		add(EnvWatchWorkspace, "1")
	}
	return out
}

// FromEnv sets e from the environment that getenv reads (os.Getenv in the
// executor's main) and fills in the defaults of ToolsDir, Workspace and
// CgroupRoot. The error joins every problem: a missing SandboxID or
// NATSURL, a DiskBytes that is not a count of bytes.
func (e *ExecutorEnv) FromEnv(getenv func(string) string) error {
	or := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	*e = ExecutorEnv{
		SandboxID:      getenv(EnvSandboxID),
		GroupID:        getenv(EnvGroupID),
		NATSURL:        getenv(EnvNATSURL),
		NATSCreds:      getenv(EnvNATSCreds),
		EgressProxy:    getenv(EnvEgressProxy),
		ToolsDir:       or(EnvToolsDir, DefaultToolsDir),
		Workspace:      or(EnvWorkspace, DefaultWorkspace),
		PackageIndex:   getenv(EnvPackageIndex),
		CgroupRoot:     or(EnvCgroupRoot, DefaultCgroupRoot),
		Debug:          getenv(EnvDebug) != "",
		Pooled:         getenv(EnvPooled) != "",
		WatchWorkspace: getenv(EnvWatchWorkspace) != "",
	}
	for _, u := range strings.Split(getenv(EnvWebhooks), ",") {
		if u = strings.TrimSpace(u); u != "" {
			e.Webhooks = append(e.Webhooks, u)
		}
	}
	for _, f := range strings.Split(getenv(EnvFamilies), ",") {
		if f = strings.TrimSpace(f); f != "" {
			e.Families = append(e.Families, f)
		}
	}
	var errs []error
	if v := getenv(EnvDiskBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want the disk limit in bytes, or 0 for none", EnvDiskBytes, v))
		} else {
			e.DiskBytes = n
		}
	}
	if v := getenv(EnvStreamBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want the stream budget in bytes, or 0 for none", EnvStreamBytes, v))
		} else {
			e.StreamBytes = n
		}
	}
	if e.SandboxID == "" {
		errs = append(errs, errors.New(EnvSandboxID+" is not set"))
	}
	if e.NATSURL == "" {
		errs = append(errs, errors.New(EnvNATSURL+" is not set"))
	}
	return errors.Join(errs...)
}
