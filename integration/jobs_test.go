package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator"
)

// jobClient is a client of its own (a connection with a client identity)
// holding a handle on sandbox id of group: another process, as far as
// sandox can tell. close drops its connection.
func jobClient(t *testing.T, group, id string) (*sdk.Sandbox, func()) {
	t.Helper()
	nc, err := connectAs(auth.RoleClient)
	require.NoError(t, err)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: group}, sdk.WithConn(nc))
	require.NoError(t, err)
	closeAll := func() { _ = g.Close(); nc.Close() }
	t.Cleanup(closeAll)
	return g.Attach(id), closeAll
}

// timeoutCtx is the test's context with a timeout d.
func timeoutCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// jobStreams collects a job's stdout and stderr from Output events.
type jobStreams struct {
	stdout, stderr strings.Builder
	exit           *schemas.JobExit
	last           uint64
}

func (s *jobStreams) add(t *testing.T, ev sdk.JobEvent) {
	t.Helper()
	require.Greater(t, ev.Seq, s.last, "sequences go up")
	s.last = ev.Seq
	if ev.Exit != nil {
		s.exit = ev.Exit
		return
	}
	b := &s.stdout
	if ev.Output.Stream == schemas.JobStderr {
		b = &s.stderr
	}
	require.Equal(t, int64(b.Len()), ev.Output.Offset, "%s chunk at offset %d: a byte lost or repeated", ev.Output.Stream, ev.Output.Offset)
	b.Write(ev.Output.Data)
}

// TestJobs runs background jobs in a real sandbox: output resumed after a
// client lost its connection, a job that outlives its client, killing a
// whole process tree, the notify subject, and another sandbox's identity
// kept out of the job subjects.
func TestJobs(t *testing.T) {
	// Its own group: it runs beside the other parallel tests (doc.go).
	t.Parallel()
	src, err := os.ReadFile("testdata/natsprobe.py")
	require.NoError(t, err)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-jobs",
		ComputeResources: schemas.ComputeResources{Memory: "256MiB"},
		Tools:            []string{writeFile(t, "natsprobe.py", string(src))},
	})
	sb := startSandbox(t, group, "it-jobs-a", sdk.SandboxOptions{})
	attacker := startSandbox(t, group, "it-jobs-b", sdk.SandboxOptions{})

	t.Run("a client that reconnects resumes every byte exactly once", func(t *testing.T) {
		const lines = 80
		first, disconnect := jobClient(t, "it-jobs", sb.ID())
		job, info, err := first.StartJob(t.Context(),
			fmt.Sprintf(`for i in $(seq 1 %d); do echo "line $i"; echo "err $i" >&2; sleep 0.05; done; exit 3`, lines),
			sdk.JobOptions{ID: "resume"})
		require.NoError(t, err)
		assert.Equal(t, "resume", info.JobID)
		assert.True(t, info.Running)

		var got jobStreams
		for ev, err := range job.Output(t.Context(), 0) {
			require.NoError(t, err)
			got.add(t, ev)
			require.Nil(t, ev.Exit, "the job ended before the client disconnected")
			if strings.Count(got.stdout.String(), "\n") >= 20 {
				break
			}
		}
		disconnect() // mid-stream: the job goes on printing
		t.Logf("disconnected after sequence %d, %d bytes of stdout", got.last, got.stdout.Len())

		second, _ := jobClient(t, "it-jobs", sb.ID())
		for ev, err := range second.Job("resume").Output(t.Context(), got.last) {
			require.NoError(t, err)
			got.add(t, ev)
		}
		var want, wantErr strings.Builder
		for i := 1; i <= lines; i++ {
			fmt.Fprintf(&want, "line %d\n", i)
			fmt.Fprintf(&wantErr, "err %d\n", i)
		}
		assert.Equal(t, want.String(), got.stdout.String())
		assert.Equal(t, wantErr.String(), got.stderr.String())
		require.NotNil(t, got.exit)
		assert.Equal(t, 3, got.exit.ExitCode)
		assert.Equal(t, int64(want.Len()), got.exit.StdoutBytes)
	})

	t.Run("a job outlives the client that started it", func(t *testing.T) {
		starter, disconnect := jobClient(t, "it-jobs", sb.ID())
		_, _, err := starter.StartJob(t.Context(), "sleep 2; echo finished; exit 5", sdk.JobOptions{ID: "outlive"})
		require.NoError(t, err)
		disconnect()

		exit, err := sb.Job("outlive").Wait(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 5, exit.ExitCode)
		var got jobStreams
		for ev, err := range sb.Job("outlive").Output(t.Context(), 0) {
			require.NoError(t, err)
			got.add(t, ev)
		}
		assert.Equal(t, "finished\n", got.stdout.String())

		jobs, err := sb.Jobs(t.Context())
		require.NoError(t, err)
		ids := map[string]bool{}
		for _, j := range jobs {
			ids[j.JobID] = !j.Running
		}
		assert.Equal(t, map[string]bool{"resume": true, "outlive": true}, ids, "both jobs listed, ended")

		_, err = sb.Job("never").Wait(t.Context())
		assert.ErrorIs(t, err, sdk.ErrNotFound)
		_, _, err = sb.StartJob(t.Context(), "true", sdk.JobOptions{ID: "outlive"})
		assert.ErrorIs(t, err, sdk.ErrAlreadyExists)
	})

	t.Run("kill ends the whole process tree", func(t *testing.T) {
		const pids = "/tmp/tree.pids"
		job, info, err := sb.StartJob(t.Context(),
			"echo $$ > "+pids+"; sleep 300 & echo $! >> "+pids+"; setsid sleep 301 & echo $! >> "+pids+
				"; (bash -c 'sleep 302 & echo $! >> "+pids+"; wait') & sleep 303",
			sdk.JobOptions{ID: "tree"})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return strings.Count(shell(t, sb, "cat "+pids+" 2>/dev/null || true"), "\n") == 4
		}, time.Minute, 100*time.Millisecond, "the job started its children")
		assert.Contains(t, shell(t, sb, "cat "+pids), fmt.Sprint(info.PID))

		killed, err := job.Kill(t.Context())
		require.NoError(t, err)
		require.NotNil(t, killed.Exit)
		assert.Equal(t, "SIGKILL", killed.Exit.Signal)
		alive := shell(t, sb, "for p in $(cat "+pids+"); do kill -0 $p 2>/dev/null && echo alive $p; done; true")
		assert.Empty(t, strings.TrimSpace(alive), "processes of the killed job")
		exit, err := job.Wait(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 137, exit.ExitCode)
	})

	t.Run("signal and notify", func(t *testing.T) {
		sub, err := env.nc.SubscribeSync(schemas.JobNotifySubject(sb.ID(), "done"))
		require.NoError(t, err)
		defer sub.Unsubscribe()
		require.NoError(t, env.nc.Flush())
		job, _, err := sb.StartJob(t.Context(), "trap 'exit 9' USR1; echo ready; while :; do sleep 0.1; done", sdk.JobOptions{ID: "sig", Notify: "done"})
		require.NoError(t, err)
		for ev, err := range job.Output(t.Context(), 0) {
			require.NoError(t, err)
			if ev.Output != nil && string(ev.Output.Data) == "ready\n" {
				break
			}
		}
		require.NoError(t, job.Signal(t.Context(), "USR1"))
		m, err := sub.NextMsg(time.Minute)
		require.NoError(t, err)
		var exit schemas.JobExit
		require.NoError(t, json.Unmarshal(m.Data, &exit))
		assert.Equal(t, "sig", exit.JobID)
		assert.Equal(t, 9, exit.ExitCode)
		assert.ErrorIs(t, job.Signal(t.Context(), "NOPE"), sdk.ErrBadRequest)
		assert.ErrorIs(t, sb.Job("never").Signal(t.Context(), "TERM"), sdk.ErrNotFound)
	})

	t.Run("waiting on a job whose sandbox ends does not hang", func(t *testing.T) {
		doomed := startSandbox(t, group, "it-jobs-c", sdk.SandboxOptions{})
		job, _, err := doomed.StartJob(t.Context(), "sleep 300", sdk.JobOptions{ID: "doomed"})
		require.NoError(t, err)
		waited := make(chan error, 1)
		var exit schemas.JobExit
		go func() {
			var err error
			exit, err = job.Wait(t.Context())
			waited <- err
		}()
		// Wait subscribes to the sandbox's events before it reads the
		// stream; give it the time a first read takes.
		require.Eventually(t, func() bool {
			_, err := job.Wait(timeoutCtx(t, 50*time.Millisecond))
			return errors.Is(err, context.DeadlineExceeded)
		}, time.Minute, 10*time.Millisecond)
		require.NoError(t, doomed.End(t.Context()))
		select {
		case err := <-waited:
			// The executor's identity is revoked before its container
			// stops, so the job's exit rarely gets out; when it does,
			// it says the job was killed.
			t.Logf("Wait after the end: exit %+v, err %v", exit, err)
			if err == nil {
				assert.Equal(t, "SIGKILL", exit.Signal)
			} else {
				assert.ErrorIs(t, err, sdk.ErrSandboxGone)
			}
		case <-time.After(time.Minute):
			t.Fatal("Wait still blocks a minute after the sandbox ended")
		}

		// A client that comes after the end is told at once, unless the
		// exit got out.
		late, _ := jobClient(t, "it-jobs", doomed.ID())
		_, err = late.Job("doomed").Wait(timeoutCtx(t, 30*time.Second))
		if exit.Signal == "" {
			assert.ErrorIs(t, err, sdk.ErrSandboxGone, "Wait after the end")
			var last error
			for _, err := range late.Job("doomed").Output(timeoutCtx(t, 30*time.Second), 0) {
				last = err
			}
			assert.ErrorIs(t, last, sdk.ErrSandboxGone, "Output after the end")
		} else {
			assert.NoError(t, err)
		}
	})

	t.Run("another sandbox can neither read nor write the jobs", func(t *testing.T) {
		victim := sb.ID()
		ops := []struct {
			op, subject, payload, reply string
			want                        string // "" for allowed
		}{
			{"sub", "sandbox." + victim + ".jobs.>", "", "", violation("Subscription", "sandbox."+victim+".jobs.>")},
			{"sub", schemas.JobStreamSubjects, "", "", violation("Subscription", schemas.JobStreamSubjects)},
			{"sub", "sandox.evt.job.>", "", "", violation("Subscription", "sandox.evt.job.>")},
			{"pub", schemas.JobSubject(victim, "resume", schemas.JobOutputKind), `{"job_id":"resume","stream":"stdout","offset":0,"data":"cHduZWQ="}`, "", violation("Publish", schemas.JobSubject(victim, "resume", schemas.JobOutputKind))},
			{"pub", schemas.JobSubject(victim, "forged", schemas.JobExitKind), `{}`, "", violation("Publish", schemas.JobSubject(victim, "forged", schemas.JobExitKind))},
			{"pub", schemas.JobNotifySubject(victim, "done"), `{}`, "", violation("Publish", schemas.JobNotifySubject(victim, "done"))},
			{"pub", "$JS.API.CONSUMER.CREATE." + schemas.JobStream, `{}`, "sandbox." + attacker.ID() + ".probe", violation("Publish", "$JS.API.CONSUMER.CREATE."+schemas.JobStream)},
			{"pub", "$JS.API.STREAM.MSG.GET." + schemas.JobStream, `{"seq":1}`, "sandbox." + attacker.ID() + ".probe", violation("Publish", "$JS.API.STREAM.MSG.GET."+schemas.JobStream)},
			{"pub", "$JS.API.DIRECT.GET." + schemas.JobStream, `{"seq":1}`, "sandbox." + attacker.ID() + ".probe", violation("Publish", "$JS.API.DIRECT.GET."+schemas.JobStream)},
			// Its own job subjects are its to publish.
			{"pub", schemas.JobSubject(attacker.ID(), "mine", schemas.JobOutputKind), `{}`, "", ""},
		}
		var list [][]string
		for _, o := range ops {
			list = append(list, []string{o.op, o.subject, o.payload, o.reply})
		}
		res := probe(t, attacker, map[string]any{"ops": list, "creds_path": orchestrator.SandboxCredsPath})
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
		// The victim's job records are as the victim wrote them.
		var got jobStreams
		for ev, err := range sb.Job("resume").Output(t.Context(), 0) {
			require.NoError(t, err)
			got.add(t, ev)
		}
		assert.NotContains(t, got.stdout.String(), "pwned")
	})
}
