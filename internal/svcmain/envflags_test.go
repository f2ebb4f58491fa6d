package svcmain

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEnvDefaults(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    time.Duration
		wantN   int
		wantErr string
	}{
		{name: "unset keeps the default", want: time.Minute, wantN: 4},
		{name: "variable sets the default", env: map[string]string{"SANDOX_BUS_WAIT": "5s", "SANDOX_CONCURRENCY": "8"}, want: 5 * time.Second, wantN: 8},
		{name: "command line wins", env: map[string]string{"SANDOX_BUS_WAIT": "5s"}, args: []string{"-bus-wait", "7s"}, want: 7 * time.Second, wantN: 4},
		{name: "bad value names its variable", env: map[string]string{"SANDOX_CONCURRENCY": "many"}, wantErr: `SANDOX_CONCURRENCY="many" (flag -concurrency)`},
		{name: "flag without a variable", env: map[string]string{"SANDOX_QUIET": "true"}, want: time.Minute, wantN: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			wait := fs.Duration("bus-wait", time.Minute, "how long to wait (env SANDOX_BUS_WAIT)")
			n := fs.Int("concurrency", 4, "commands at once (env SANDOX_CONCURRENCY)")
			quiet := fs.Bool("quiet", false, "no variable sets this")
			err := EnvDefaults(fs, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.NoError(t, fs.Parse(tt.args))
			require.Equal(t, tt.want, *wait)
			require.Equal(t, tt.wantN, *n)
			require.False(t, *quiet)
		})
	}
}
