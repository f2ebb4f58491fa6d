package awsenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForContainerVariables checks which of the operator's variables reach
// the container: every non-empty AWS_* one, and nothing else.
func TestForContainerVariables(t *testing.T) {
	home := t.TempDir() // no ~/.aws
	environ := []string{
		"HOME=" + home,
		"PATH=/usr/bin",
		"AWS_ACCESS_KEY_ID=AKIDOPERATOR",
		"AWS_SECRET_ACCESS_KEY=secret",
		"AWS_SESSION_TOKEN=token",
		"AWS_REGION=eu-west-1",
		"AWS_PROFILE=", // empty: as if unset
		"AWS_ENDPOINT_URL_S3=http://minio:9000",
		"SANDOX_EMBED_KEY=not-aws",
		"aws_access_key_id=lower-case",
		"AWSX=no",
		"GITHUB_TOKEN=no",
	}
	s, err := ForContainer(environ, "/etc/sandox-data")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"AWS_ACCESS_KEY_ID=AKIDOPERATOR",
		"AWS_ENDPOINT_URL_S3=http://minio:9000",
		"AWS_REGION=eu-west-1",
		"AWS_SECRET_ACCESS_KEY=secret",
		"AWS_SESSION_TOKEN=token",
	}, s.Env)
	assert.Empty(t, s.Files)
}

// TestForContainerFiles checks the shared files: the ones the variables
// name, else ~/.aws's, copied with the variables naming the copies; a
// named file that cannot be read is an error naming it, a missing default
// is not.
func TestForContainerFiles(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	write := func(path, text string) string {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	write(filepath.Join(home, ".aws", "config"), "[default]\nregion = eu-north-1\n")
	write(filepath.Join(home, ".aws", "credentials"), "[default]\naws_access_key_id = AKIDHOME\n")
	other := t.TempDir()
	namedCreds := write(filepath.Join(other, "creds"), "[default]\naws_access_key_id = AKIDNAMED\n")
	bundle := write(filepath.Join(other, "ca.pem"), "-----BEGIN CERTIFICATE-----\n")

	tests := []struct {
		name    string
		environ []string
		env     []string
		files   map[string]string
		err     string
	}{
		{
			name:    "the defaults in ~/.aws",
			environ: []string{"HOME=" + home},
			env:     []string{"AWS_CONFIG_FILE=/etc/sandox-data/aws-config", "AWS_SHARED_CREDENTIALS_FILE=/etc/sandox-data/aws-credentials"},
			files: map[string]string{
				"aws-config":      "[default]\nregion = eu-north-1\n",
				"aws-credentials": "[default]\naws_access_key_id = AKIDHOME\n",
			},
		},
		{
			name:    "a named file replaces its default, the other default stays",
			environ: []string{"HOME=" + home, "AWS_SHARED_CREDENTIALS_FILE=" + namedCreds, "AWS_CA_BUNDLE=" + bundle},
			env: []string{"AWS_CA_BUNDLE=/etc/sandox-data/aws-ca-bundle.pem", "AWS_CONFIG_FILE=/etc/sandox-data/aws-config",
				"AWS_SHARED_CREDENTIALS_FILE=/etc/sandox-data/aws-credentials"},
			files: map[string]string{
				"aws-config":        "[default]\nregion = eu-north-1\n",
				"aws-credentials":   "[default]\naws_access_key_id = AKIDNAMED\n",
				"aws-ca-bundle.pem": "-----BEGIN CERTIFICATE-----\n",
			},
		},
		{
			name:    "no ~/.aws: no files",
			environ: []string{"HOME=" + other, "AWS_REGION=us-east-1"},
			env:     []string{"AWS_REGION=us-east-1"},
			files:   map[string]string{},
		},
		{
			name:    "no HOME: no defaults",
			environ: []string{"AWS_REGION=us-east-1"},
			env:     []string{"AWS_REGION=us-east-1"},
			files:   map[string]string{},
		},
		{
			name:    "a named file that is missing",
			environ: []string{"HOME=" + home, "AWS_CONFIG_FILE=" + filepath.Join(other, "missing")},
			err:     "AWS settings for the data service: AWS_CONFIG_FILE (" + filepath.Join(other, "missing") + "): open " + filepath.Join(other, "missing") + ": no such file or directory",
		},
		{
			name:    "a named web identity token that is a directory",
			environ: []string{"AWS_WEB_IDENTITY_TOKEN_FILE=" + other},
			err:     "AWS settings for the data service: AWS_WEB_IDENTITY_TOKEN_FILE (" + other + "): read " + other + ": is a directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ForContainer(tt.environ, "/etc/sandox-data")
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.env, s.Env)
			files := map[string]string{}
			for name, data := range s.Files {
				files[name] = string(data)
			}
			assert.Equal(t, tt.files, files)
		})
	}
}

// TestForContainerDigest checks that the digest follows every variable
// and every file's content, and nothing else.
func TestForContainerDigest(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	creds := filepath.Join(home, ".aws", "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = A\n"), 0o600))
	base := []string{"HOME=" + home, "AWS_REGION=us-east-1", "PATH=/bin"}
	digestOf := func(environ []string) string {
		t.Helper()
		s, err := ForContainer(environ, "/etc/sandox-data")
		require.NoError(t, err)
		return s.Digest
	}
	first := digestOf(base)
	assert.Equal(t, first, digestOf([]string{"PATH=/usr/bin", "AWS_REGION=us-east-1", "HOME=" + home}), "another PATH, another order")
	assert.NotEqual(t, first, digestOf(append(base, "AWS_PROFILE=prod")), "a variable added")
	require.NoError(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = B\n"), 0o600))
	assert.NotEqual(t, first, digestOf(base), "a file changed")
	assert.NotContains(t, first, "aws_access_key_id")
}
