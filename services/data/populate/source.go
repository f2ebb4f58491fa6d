package populate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ErrSource means a source could not be read.
var ErrSource = errors.New("source")

// ErrNotAllowed means a URL source's host is not on the population
// allowlist (the data service's SANDOX_POPULATE_ALLOW).
var ErrNotAllowed = errors.New("host not on the population allowlist (SANDOX_POPULATE_ALLOW)")

// file is one file of a source: its name (for reports and ids) and how to
// open it.
type file struct {
	Name string
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// fetcher lists and opens the files of sources.
type fetcher struct {
	dir   string // relative local paths resolve against it
	http  *http.Client
	dial  func(ctx context.Context, network, addr string) (net.Conn, error) // nil: the default
	allow func(host string) bool                                            // nil allows every host
	s3    S3Config
	s3c   *s3.Client
}

// newFetcher returns a fetcher whose HTTP and S3 connections are made by
// dial (without a proxy) when it is set.
func newFetcher(dir string, dial func(ctx context.Context, network, addr string) (net.Conn, error), allow func(string) bool, s3cfg S3Config) *fetcher {
	f := &fetcher{dir: dir, http: http.DefaultClient, dial: dial, allow: allow, s3: s3cfg}
	if dial != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		f.withDial(tr)
		f.http = &http.Client{Transport: tr}
	}
	return f
}

// withDial makes tr connect through f.dial, with no proxy.
func (f *fetcher) withDial(tr *http.Transport) {
	tr.Proxy = nil
	tr.DialContext = f.dial
}

// files lists the files of a source, in name order.
func (f *fetcher) files(ctx context.Context, src string) ([]file, error) {
	switch {
	case strings.HasPrefix(src, "s3://"):
		if f.s3.Endpoint != "" {
			if err := f.allowed(src, f.s3.Endpoint); err != nil {
				return nil, err
			}
		}
		return f.s3Files(ctx, src)
	case strings.HasPrefix(src, "http://"), strings.HasPrefix(src, "https://"):
		if err := f.allowed(src, src); err != nil {
			return nil, err
		}
		return []file{{Name: src, Open: func(ctx context.Context) (io.ReadCloser, error) { return f.get(ctx, src) }}}, nil
	}
	path, err := f.local(src)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrSource, src, readable(err))
	}
	if !info.IsDir() {
		return []file{localFile(src, path)}, nil
	}
	var out []file
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		out = append(out, localFile(filepath.Join(src, rel), p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrSource, src, readable(err))
	}
	return out, nil
}

// local resolves a local source. With a directory configured (the data
// service's SANDOX_POPULATE_DIR), a source must stay inside it, symbolic
// links resolved: a group's config cannot read the control plane's own
// files (its credentials) into a namespace. Without one (a test, a data
// service in process) any path is read.
func (f *fetcher) local(src string) (string, error) {
	if f.dir == "" {
		return src, nil
	}
	path := src
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.dir, path)
	}
	root, err := filepath.EvalSymlinks(f.dir)
	if err != nil {
		return "", fmt.Errorf("%w %s: the population directory %s: %w", ErrSource, src, f.dir, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w %s: no file %s: local sources are read from the population directory %s (SANDOX_POPULATE_DIR; `sandox up` binds the same path of its host)", ErrSource, src, path, f.dir)
	}
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrSource, src, readable(err))
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w %s: outside the population directory %s", ErrSource, src, f.dir)
	}
	return real, nil
}

// allowed checks the host of rawURL, which source src reaches, against the
// allowlist: the early check with a clear message. The HTTP client's dialer
// checks again where it connects (redirects, names resolved).
func (f *fetcher) allowed(src, rawURL string) error {
	if f.allow == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%w %s: not a URL with a host", ErrSource, src)
	}
	if !f.allow(u.Hostname()) {
		return fmt.Errorf("%w %s: %w: %q", ErrSource, src, ErrNotAllowed, u.Hostname())
	}
	return nil
}

func localFile(name, path string) file {
	return file{Name: name, Open: func(context.Context) (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, readable(err)
		}
		return f, nil
	}}
}

// readable adds to a permission error the user the data service runs as,
// which must be able to read the file (uid 10002 under `sandox up`).
func readable(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("not readable by the data service's uid %d (make it readable by that user): %w", os.Getuid(), err)
	}
	return err
}

func (f *fetcher) get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return resp.Body, nil
}

// client returns the S3 client: endpoint, region and profile from the
// config, the rest (credentials, region) from the environment and the
// shared config files, as the AWS SDK reads them.
func (f *fetcher) client(ctx context.Context) (*s3.Client, error) {
	if f.s3c != nil {
		return f.s3c, nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if f.s3.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(f.s3.Profile))
	}
	if f.s3.Region != "" {
		opts = append(opts, awsconfig.WithRegion(f.s3.Region))
	}
	if f.dial != nil {
		// The SDK adds its own CA bundle (AWS_CA_BUNDLE) to the transport,
		// so it needs its buildable client rather than an http.Client.
		opts = append(opts, awsconfig.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(f.withDial)))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	// Without credentials every request would fail with the chain's
	// last attempt (often the instance metadata endpoint); say where they
	// come from instead.
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("no AWS credentials: the data service reads AWS_* and the shared config and credentials files (docs/databases.md): %w", err)
	}
	f.s3c = s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
		if f.s3.Endpoint != "" {
			o.BaseEndpoint = aws.String(f.s3.Endpoint)
			o.UsePathStyle = true
		}
		if f.s3.PathStyle != nil {
			o.UsePathStyle = *f.s3.PathStyle
		}
	})
	return f.s3c, nil
}

// s3Files lists s3://bucket/key (one object) or s3://bucket/prefix/ (every
// object under it).
func (f *fetcher) s3Files(ctx context.Context, src string) ([]file, error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(src, "s3://"), "/")
	if bucket == "" {
		return nil, fmt.Errorf("%w %s: no bucket", ErrSource, src)
	}
	c, err := f.client(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrSource, src, err)
	}
	open := func(k string) file {
		return file{Name: "s3://" + bucket + "/" + k, Open: func(ctx context.Context) (io.ReadCloser, error) {
			o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
			if err != nil {
				return nil, err
			}
			return o.Body, nil
		}}
	}
	if key != "" && !strings.HasSuffix(key, "/") {
		return []file{open(key)}, nil
	}
	var out []file
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrSource, src, err)
		}
		for _, o := range page.Contents {
			if k := aws.ToString(o.Key); !strings.HasSuffix(k, "/") {
				out = append(out, open(k))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s: no objects", ErrSource, src)
	}
	return out, nil
}
