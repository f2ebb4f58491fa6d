package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDataAWS checks what `sandox up` gives sandox-data from the
// operator's environment: the AWS_* variables, and the shared files as
// copies in the data service's secrets directory under names that none of
// its other secrets use.
func TestDataAWS(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("[default]\n"), 0o600))
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "")
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("SANDOX_SEARCH_BRAVE_API_KEY", "not for the data service")

	aws, err := dataAWS()
	require.NoError(t, err)
	assert.Contains(t, aws.Env, "AWS_REGION=eu-west-3")
	assert.Contains(t, aws.Env, "AWS_SHARED_CREDENTIALS_FILE="+dataCredsDir+"/aws-credentials")
	assert.NotContains(t, aws.Env, "SANDOX_SEARCH_BRAVE_API_KEY=not for the data service")
	for _, secret := range []string{filepath.Base(dataCredsFile), filepath.Base(dataPasswordFile)} {
		assert.NotContains(t, aws.Files, secret)
	}
	assert.Equal(t, []byte("[default]\n"), aws.Files["aws-credentials"])
}
