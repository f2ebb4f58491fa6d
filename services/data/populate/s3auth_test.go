package populate_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/s3double"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data/populate"
)

// TestS3Credentials loads an s3:// source from a test double of S3 that
// checks every request's signature (s3double): with the right key pair
// from the environment, or from a shared credentials file and a profile,
// the objects load; with another access key id, or the right id and
// another secret, the source is reported with S3's own error, and nothing
// loads; without credentials, the report says where they come from.
func TestS3Credentials(t *testing.T) {
	s3 := s3double.New("AKIDPOPULATE", "right-secret")
	require.NoError(t, s3.Put("corpus", "docs/a.jsonl", `{"id":"a1","text":"signed for"}`+"\n"))
	srv := httptest.NewServer(s3)
	t.Cleanup(srv.Close)
	credsFile := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(credsFile, []byte("[loader]\naws_access_key_id = AKIDPOPULATE\naws_secret_access_key = right-secret\n"), 0o600))

	tests := []struct {
		name    string
		env     map[string]string
		reasons []string // in the source's report; none when it loads
	}{
		{"the key pair in the environment", map[string]string{"AWS_ACCESS_KEY_ID": "AKIDPOPULATE", "AWS_SECRET_ACCESS_KEY": "right-secret"}, nil},
		{"a profile of the shared credentials file", map[string]string{"AWS_SHARED_CREDENTIALS_FILE": credsFile, "AWS_PROFILE": "loader"}, nil},
		{"another access key id", map[string]string{"AWS_ACCESS_KEY_ID": "AKIDSTRANGER", "AWS_SECRET_ACCESS_KEY": "right-secret"}, []string{
			"source s3://corpus/docs/: operation error S3: ListObjectsV2, https response error StatusCode: 403",
			"api error InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.",
		}},
		{"another secret", map[string]string{"AWS_ACCESS_KEY_ID": "AKIDPOPULATE", "AWS_SECRET_ACCESS_KEY": "wrong-secret"}, []string{
			"https response error StatusCode: 403",
			"api error SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided.",
		}},
		{"no credentials", map[string]string{"AWS_EC2_METADATA_DISABLED": "true"}, []string{
			"source s3://corpus/docs/: no AWS credentials: the data service reads AWS_* and the shared config and credentials files (docs/databases.md): ",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
				t.Setenv(k, "")
			}
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg, err := populate.Parse(`s3: {endpoint: "` + srv.URL + `", region: us-east-1}
databases: {qdrant: {ns: [{source: s3://corpus/docs/}]}}`)
			require.NoError(t, err)
			mem := &memVectors{docs: map[string]schemas.VectorDocument{}}
			r := &populate.Runner{GroupID: "g", Vectors: mem, Dir: t.TempDir()}
			out, err := r.Run(context.Background(), cfg)
			require.NoError(t, err)
			require.Len(t, out, 1)
			if tt.reasons == nil {
				assert.Empty(t, out[0].Bad)
				assert.Equal(t, 1, out[0].Loaded)
				return
			}
			require.Len(t, out[0].Bad, 1)
			for _, reason := range tt.reasons {
				assert.Contains(t, out[0].Bad[0].Reason, reason)
			}
			assert.Zero(t, out[0].Loaded)
			assert.Empty(t, mem.docs)
		})
	}
	assert.Equal(t, int64(2), s3.Refused(), "the strangers' requests; without credentials nothing is sent")
}
