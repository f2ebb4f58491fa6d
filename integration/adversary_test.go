package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator"
)

// probeResult is what testdata/natsprobe.py reports.
type probeResult struct {
	Connect string `json:"connect"`
	Results []struct {
		Op      string   `json:"op"`
		Subject string   `json:"subject"`
		Answer  []string `json:"answer"`
	} `json:"results"`
}

// probe runs the raw NATS client inside sb as a user tool.
func probe(t *testing.T, sb *sdk.Sandbox, args map[string]any) probeResult {
	t.Helper()
	data, err := json.Marshal(args)
	require.NoError(t, err)
	obs, err := sb.SendActions(t.Context(), schemas.Actions{{Tool: "natsprobe.probe", Description: "attack the bus", Args: data}})
	require.NoError(t, err)
	require.Len(t, obs, 1)
	mustOK(t, obs[0])
	var res probeResult
	require.NoError(t, json.Unmarshal(obs[0].Return, &res), "return %s, stderr %s", obs[0].Return, obs[0].Stderr)
	return res
}

// shell runs a shell command in sb and returns its stdout.
func shell(t *testing.T, sb *sdk.Sandbox, command string) string {
	t.Helper()
	args, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	obs, err := sb.SendActions(t.Context(), schemas.Actions{{Tool: "terminal_tools.run", Args: args}})
	require.NoError(t, err)
	require.Len(t, obs, 1)
	mustOK(t, obs[0])
	return obs[0].Stdout
}

// stealCreds reads a sandbox's own credentials from inside it, as code in
// the sandbox can, and writes them to a file of the test.
func stealCreds(t *testing.T, sb *sdk.Sandbox) (string, string) {
	t.Helper()
	text := shell(t, sb, "cat "+orchestrator.SandboxCredsPath)
	require.Contains(t, text, "BEGIN NATS USER JWT")
	p := filepath.Join(t.TempDir(), sb.ID()+".creds")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return text, p
}

// natsCLI runs the nats CLI against the test system and returns its output.
func natsCLI(t *testing.T, creds string, args ...string) string {
	t.Helper()
	bin := natstest.CLI(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	all := append([]string{"--server", env.url, "--creds", creds, "--timeout", "1s"}, args...)
	out, _ := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	return string(out)
}

func violation(op, subject string) string {
	return fmt.Sprintf("-ERR 'Permissions Violation for %s to %q'", op, subject)
}

// victimWorks checks that the victim still answers and ran nothing of the
// attacker's.
func victimWorks(t *testing.T, victim *sdk.Sandbox) {
	t.Helper()
	out := shell(t, victim, "test -e /workspace/pwned && echo pwned || echo clean")
	assert.Equal(t, "clean", strings.TrimSpace(out), "the victim ran the attacker's batch")
}

// TestAdversarialBus attacks the bus from inside a real sandbox: a raw NATS
// client in Python (a user tool) and the nats CLI with stolen credentials.
func TestAdversarialBus(t *testing.T) {
	src, err := os.ReadFile("testdata/natsprobe.py")
	require.NoError(t, err)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-adv",
		ComputeResources: schemas.ComputeResources{Memory: "256MiB"},
		Tools:            []string{writeFile(t, "natsprobe.py", string(src))},
	})
	victim := startSandbox(t, group, "it-adv-victim", sdk.SandboxOptions{})
	attacker := startSandbox(t, group, "it-adv-attacker", sdk.SandboxOptions{})
	const own = orchestrator.SandboxCredsPath
	victimBatch := `{"terminal_tools.run": {"args": {"command": "touch /workspace/pwned"}}}`
	endGroup, err := json.Marshal(schemas.Command{ID: "evil", Kind: schemas.EndGroup, GroupID: "it-adv"})
	require.NoError(t, err)

	t.Run("own credentials: only its own subjects", func(t *testing.T) {
		ops := []struct {
			op, subject, payload, reply string
			want                        string // "" for allowed
		}{
			{"sub", "sandbox.it-adv-attacker.probe", "", "", ""},
			{"sub", ">", "", "", violation("Subscription", ">")},
			{"sub", "sandbox.it-adv-victim.>", "", "", violation("Subscription", "sandbox.it-adv-victim.>")},
			{"sub", "sandbox.it-adv-victim.actions", "", "", violation("Subscription", "sandbox.it-adv-victim.actions")},
			{"sub", "_INBOX.>", "", "", violation("Subscription", "_INBOX.>")},
			{"sub", "sandox.>", "", "", violation("Subscription", "sandox.>")},
			{"sub", "sandox.obs.it-adv-victim.>", "", "", violation("Subscription", "sandox.obs.it-adv-victim.>")},
			{"sub", "$JS.API.>", "", "", violation("Subscription", "$JS.API.>")},
			{"sub", "$KV.>", "", "", violation("Subscription", "$KV.>")},
			{"sub", "$SYS.>", "", "", violation("Subscription", "$SYS.>")},
			{"pub", "sandbox.it-adv-victim.actions", victimBatch, "sandox.obs.it-adv-victim.evil", violation("Publish", "sandbox.it-adv-victim.actions")},
			{"pub", "sandbox.it-adv-attacker.actions", victimBatch, "", violation("Publish", "sandbox.it-adv-attacker.actions")},
			{"pub", "sandox.cmd.end_group", string(endGroup), "", violation("Publish", "sandox.cmd.end_group")},
			// Searching in the victim's name would spend its search quota.
			{"pub", schemas.SandboxSearchSubject("it-adv-victim"), `{"query":"q"}`, "sandbox.it-adv-attacker.probe", violation("Publish", schemas.SandboxSearchSubject("it-adv-victim"))},
			{"pub", "sandox.auth.mint", `{"sandbox_id":"it-adv-victim"}`, "sandbox.it-adv-attacker.probe", violation("Publish", "sandox.auth.mint")},
			{"pub", "$JS.API.STREAM.INFO.SANDOX_COMMANDS", "", "sandbox.it-adv-attacker.probe", violation("Publish", "$JS.API.STREAM.INFO.SANDOX_COMMANDS")},
			{"pub", "$JS.API.CONSUMER.MSG.NEXT.SANDOX_COMMANDS.orchestrator", "1", "sandbox.it-adv-attacker.probe", violation("Publish", "$JS.API.CONSUMER.MSG.NEXT.SANDOX_COMMANDS.orchestrator")},
			{"pub", "$KV.sandox_sandboxes.it-adv-victim", "{}", "", violation("Publish", "$KV.sandox_sandboxes.it-adv-victim")},
			{"pub", "$JS.API.DIRECT.GET.KV_sandox_groups.$KV.sandox_groups.it-adv", "", "sandbox.it-adv-attacker.probe", violation("Publish", "$JS.API.DIRECT.GET.KV_sandox_groups.$KV.sandox_groups.it-adv")},
		}
		var list [][]string
		for _, o := range ops {
			list = append(list, []string{o.op, o.subject, o.payload, o.reply})
		}
		res := probe(t, attacker, map[string]any{"ops": list, "creds_path": own})
		require.Equal(t, "ok", res.Connect)
		require.Len(t, res.Results, len(ops))
		for i, o := range ops {
			t.Run(o.op+" "+o.subject, func(t *testing.T) {
				got := res.Results[i].Answer
				if o.want == "" {
					assert.Empty(t, got)
					return
				}
				assert.Contains(t, got, o.want)
			})
		}
		victimWorks(t, victim)
		st, err := victim.Refresh(t.Context())
		require.NoError(t, err)
		assert.Equal(t, schemas.StateRunning, st.State, "the refused end_group must not end anything")
	})

	t.Run("no credentials are refused", func(t *testing.T) {
		res := probe(t, attacker, map[string]any{"ops": [][]string{{"sub", ">"}}})
		assert.Contains(t, res.Connect, "-ERR 'Authorization Violation'")
		assert.Empty(t, res.Results)
		victimWorks(t, victim)
	})

	t.Run("forged credentials for the victim are refused", func(t *testing.T) {
		// A sandbox identity for the victim, signed by a key the server
		// does not trust: all an attacker can make without the authority.
		forger, err := auth.NewAuthority()
		require.NoError(t, err)
		c, err := forger.Mint("sandbox it-adv-victim", auth.RoleSandbox, "it-adv-victim")
		require.NoError(t, err)
		text, err := c.File()
		require.NoError(t, err)
		res := probe(t, attacker, map[string]any{"ops": [][]string{{"sub", "sandbox.it-adv-victim.>"}}, "creds_text": string(text)})
		assert.Contains(t, res.Connect, "-ERR 'Authorization Violation'")
		victimWorks(t, victim)
	})

	t.Run("stolen credentials are refused outside the sandbox (nats CLI)", func(t *testing.T) {
		// A sandbox's identity is valid on the NATS socket alone: copied
		// out and used over TCP, it does not even connect.
		_, stolen := stealCreds(t, attacker)
		tests := []struct {
			name string
			args []string
		}{
			{"subscribe to everything", []string{"sub", ">"}},
			{"subscribe to the victim", []string{"sub", "sandbox.it-adv-victim.>"}},
			{"send the victim a batch", []string{"request", "sandbox.it-adv-victim.actions", victimBatch}},
			{"end the group", []string{"request", "sandox.cmd.end_group", string(endGroup)}},
			{"read a bucket", []string{"kv", "get", "sandox_sandboxes", "it-adv-victim"}},
			{"list streams", []string{"stream", "ls"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assert.Contains(t, natsCLI(t, stolen, tt.args...), "Authorization Violation")
			})
		}
		victimWorks(t, victim)
	})

	t.Run("an ended sandbox's credentials are refused at once", func(t *testing.T) {
		doomed := startSandbox(t, group, "it-adv-ended", sdk.SandboxOptions{})
		text, stolen := stealCreds(t, doomed)
		// They work while it lives, in their own sandbox.
		alive := probe(t, doomed, map[string]any{"ops": [][]string{{"sub", "sandbox.it-adv-ended.x"}}, "creds_text": text})
		require.Equal(t, "ok", alive.Connect)
		require.NoError(t, doomed.End(t.Context()))
		assert.Contains(t, natsCLI(t, stolen, "pub", "sandbox.it-adv-ended.ping", "x"), "Authorization Violation")
		res := probe(t, attacker, map[string]any{"ops": [][]string{{"sub", "sandbox.it-adv-ended.>"}}, "creds_text": text})
		assert.Contains(t, res.Connect, "-ERR 'Authorization Violation'")
		victimWorks(t, victim)
	})
}
