package executor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// TestPreopenTools checks the two steps of a pooled executor's tools: the
// families that need no identity open before the claim, the database
// family only after it, with the claimed sandbox's id in its requests.
func TestPreopenTools(t *testing.T) {
	ctx := t.Context()
	var subjects []string
	request := func(_ context.Context, subject string, _ []byte) ([]byte, error) {
		subjects = append(subjects, subject)
		return []byte(`{"grants":[]}`), nil
	}
	families := []string{"filesystem_tools", "database_tools", "web_tools"}
	env := tools.Env{Executor: schemas.ExecutorEnv{SandboxID: "pool-0123", Families: families, Workspace: t.TempDir()}, Request: request}
	pending, err := PreopenTools(ctx, env)
	require.NoError(t, err)
	for i, f := range pending.fams {
		assert.Equal(t, f.NeedsIdentity, pending.opened[i] == nil, "family %s opened before the claim: %v", f.Name, pending.opened[i] != nil)
	}

	env.Executor.SandboxID, env.Executor.GroupID = "sb1", "g1"
	reg, closeTools, err := pending.Finish(ctx, env)
	require.NoError(t, err)
	t.Cleanup(closeTools)
	assert.Equal(t, []string{"database_tools", "filesystem_tools", "web_tools"}, reg.Modules())
	// Every request a family sends names the claimed sandbox, never the
	// pool id: each goes to a subject only the sandbox's identity may use.
	for _, call := range []struct{ tool, args string }{
		{"database_tools.list_namespaces", `{}`},
		{"web_tools.web_search", `{"query": "sandox"}`},
	} {
		tool, err := reg.Resolve(call.tool)
		require.NoError(t, err)
		_, _ = tool.Call(ctx, []byte(call.args)) // the recorded answer need not fit
	}
	assert.Equal(t, []string{schemas.DatabaseListSubject("sb1"), schemas.SandboxSearchSubject("sb1")}, subjects,
		"the families ask as the claimed sandbox")
}

// TestPreopenToolsOtherFamilies checks that a claim naming other families
// than the pooled sandbox opened gets exactly the claimed ones.
func TestPreopenToolsOtherFamilies(t *testing.T) {
	ctx := t.Context()
	env := tools.Env{Executor: schemas.ExecutorEnv{SandboxID: "pool-0123", Families: []string{"filesystem_tools"}, Workspace: t.TempDir()}}
	pending, err := PreopenTools(ctx, env)
	require.NoError(t, err)
	env.Executor.SandboxID, env.Executor.Families = "sb1", []string{"terminal_tools"}
	reg, closeTools, err := pending.Finish(ctx, env)
	require.NoError(t, err)
	t.Cleanup(closeTools)
	assert.Equal(t, []string{"terminal_tools"}, reg.Modules())
}
