package filesystem

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandox/sandox/tools"
)

type uploadArgs struct {
	Path          string `json:"path" jsonschema:"description=File to write. Missing parent directories are created and an existing file is replaced."`
	ContentBase64 string `json:"content_base64" jsonschema:"description=The file's bytes in standard base64 (padding optional)."`
}

func (f *fsys) uploadFile() tools.Tool {
	const op = "upload_file"
	return tools.New(Family, op,
		"Write bytes given as base64 to a file (binary files included), creating parent directories and replacing an existing file atomically.",
		func(_ context.Context, a uploadArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			data, err := decodeBase64(a.ContentBase64)
			if err != nil {
				return tools.Result{}, d.invalid(op, abs, "content_base64 is not valid base64: %v", err)
			}
			if _, err := replaceFile(abs, data); err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("uploaded %s to %s", byteSize(int64(len(data))), d.show(abs))}, nil
		})
}

// decodeBase64 decodes standard base64 with or without padding; line
// breaks and spaces are ignored.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

type downloadArgs struct {
	Path string `json:"path" jsonschema:"description=File to download."`
}

// download is the structured result of download_file.
type download struct {
	Path          string `json:"path"`
	Size          int64  `json:"size"`
	ContentBase64 string `json:"content_base64"`
}

func (f *fsys) downloadFile() tools.Tool {
	const op = "download_file"
	return tools.New(Family, op,
		"Return a file's bytes base64-encoded, for binary files or to copy a file out of the sandbox. The file must fit the read limit.",
		func(_ context.Context, a downloadArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			file, info, err := d.openRegular(op, abs)
			if err != nil {
				return tools.Result{}, err
			}
			defer file.Close()
			data, err := d.readBounded(op, abs, file, info, f.cfg.MaxReadBytes, "")
			if err != nil {
				return tools.Result{}, err
			}
			dl := download{Path: d.show(abs), Size: int64(len(data)), ContentBase64: base64.StdEncoding.EncodeToString(data)}
			ret, err := json.Marshal(dl)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: dl.ContentBase64, Return: ret}, nil
		})
}
