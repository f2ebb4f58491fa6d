package filesystem

import (
	"encoding/base64"
	"encoding/json"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

func TestUploadFile(t *testing.T) {
	bin := "\x00\xff\x10binary\n"
	tests := []struct {
		name, path, content, want, wantOut string
	}{
		{"new binary file", "up/data.bin", base64.StdEncoding.EncodeToString([]byte(bin)), bin, "uploaded 10 bytes to up/data.bin"},
		{"replaces a file", "old.txt", base64.StdEncoding.EncodeToString([]byte("new")), "new", "uploaded 3 bytes to old.txt"},
		{"without padding", "p.txt", base64.RawStdEncoding.EncodeToString([]byte("ab")), "ab", "uploaded 2 bytes"},
		{"with line breaks", "l.txt", "aGVs\nbG8=\n", "hello", "uploaded 5 bytes"},
		{"empty", "e.txt", "", "", "uploaded 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"old.txt": "old"}, 0)
			res := fx.mustCall(t, "upload_file", args{"path": tt.path, "content_base64": tt.content})
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path(tt.path)))
		})
	}
}

func TestUploadFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"not base64", args{"path": "x", "content_base64": "not base64!"}, schemas.CodeInvalidArgs, []string{`upload_file "x"`, "not valid base64"}},
		{"no content", args{"path": "x"}, schemas.CodeInvalidArgs, []string{"content_base64"}},
		{"directory", args{"path": "dir", "content_base64": "eA=="}, syscall.EISDIR, []string{`"dir"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"dir/": ""}, 0)
			_, err := fx.call(t, "upload_file", tt.args)
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

func TestDownloadFile(t *testing.T) {
	bin := "\x00\xff\x10binary\n"
	fx := newFixture(t, map[string]string{"data.bin": bin, "empty": ""}, 0)
	tests := []struct {
		name, path, want string
	}{
		{"binary file", "data.bin", bin},
		{"empty file", "empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fx.mustCall(t, "download_file", args{"path": tt.path})
			enc := base64.StdEncoding.EncodeToString([]byte(tt.want))
			require.Equal(t, enc, res.Stdout, "stdout")
			var got download
			require.NoError(t, json.Unmarshal(res.Return, &got))
			want := download{Path: tt.path, Size: int64(len(tt.want)), ContentBase64: enc}
			require.Equal(t, want, got, "return")
		})
	}
}

func TestDownloadFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		class error
		want  []string
	}{
		{"missing", "nope", tools.ErrNotFound, []string{`download_file "nope"`}},
		{"directory", "dir", syscall.EISDIR, []string{`"dir"`}},
		{"over the limit", "big.txt", tools.ErrTooLarge, []string{`"big.txt"`, "160 bytes", "over the 64 bytes limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"dir/": "", "big.txt": bigText(20)}, 64)
			_, err := fx.call(t, "download_file", args{"path": tt.path})
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

func TestUploadDownloadRoundTrip(t *testing.T) {
	fx := newFixture(t, nil, 0)
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	enc := base64.StdEncoding.EncodeToString(data)
	fx.mustCall(t, "upload_file", args{"path": "all.bin", "content_base64": enc})
	res := fx.mustCall(t, "download_file", args{"path": "all.bin"})
	require.Equal(t, enc, res.Stdout)
	res = fx.mustCall(t, "read_file", args{"path": "all.bin", "encoding": "base64"})
	require.Equal(t, enc, res.Stdout, "read_file base64")
}
