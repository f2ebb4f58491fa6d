// Package s3double is a test double of S3 that authenticates: gofakes3
// (an S3 API server in memory) behind a check of every request's AWS
// Signature Version 4, against one access key pair. A request signed with
// another access key id is refused as S3 refuses it (403,
// InvalidAccessKeyId, in S3's XML error body), one signed with the right
// id and another secret too (SignatureDoesNotMatch), and one without a
// signature (AccessDenied). Tests use it to prove that credentials reach
// the AWS SDK of the data service; it is not a production server.
package s3double

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Double is the test double: an http.Handler to serve (httptest, or a
// listener of the test's choice), and its in-memory store to fill.
type Double struct {
	// Backend holds the buckets and objects.
	Backend *s3mem.Backend
	keyID   string
	secret  string
	s3      http.Handler
	// accepted and refused count requests.
	accepted, refused atomic.Int64
}

// New returns a double that accepts requests signed with the access key
// keyID and its secret.
func New(keyID, secret string) *Double {
	backend := s3mem.New()
	return &Double{Backend: backend, keyID: keyID, secret: secret, s3: gofakes3.New(backend).Server()}
}

// Put stores an object, making its bucket when it has none.
func (d *Double) Put(bucket, key, body string) error {
	if ok, _ := d.Backend.BucketExists(bucket); !ok {
		if err := d.Backend.CreateBucket(bucket); err != nil {
			return err
		}
	}
	_, err := d.Backend.PutObject(bucket, key, map[string]string{}, strings.NewReader(body), int64(len(body)), nil)
	return err
}

// Accepted returns how many requests were authenticated and served.
func (d *Double) Accepted() int64 { return d.accepted.Load() }

// Refused returns how many requests were refused.
func (d *Double) Refused() int64 { return d.refused.Load() }

// ServeHTTP checks the request's signature, then serves it from the store.
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg := d.check(r); code != "" {
		d.refused.Add(1)
		writeError(w, http.StatusForbidden, code, msg)
		return
	}
	d.accepted.Add(1)
	d.s3.ServeHTTP(w, r)
}

// check verifies the Authorization header: its access key id, then its
// signature, recomputed over the headers it names with the double's
// secret. It returns S3's error code and message, or "".
func (d *Double) check(r *http.Request) (code, msg string) {
	auth := r.Header.Get("Authorization")
	fields, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "AccessDenied", "Access Denied"
	}
	var cred, signed, sig string
	for _, f := range strings.Split(fields, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			sig = v
		}
	}
	scope := strings.Split(cred, "/") // keyID/date/region/service/aws4_request
	if len(scope) != 5 || scope[0] != d.keyID {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "AccessDenied", "Access Denied"
	}
	again, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return "AccessDenied", "Access Denied"
	}
	again.Host = r.Host
	for _, h := range strings.Split(signed, ";") {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = r.ContentLength
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	creds := aws.Credentials{AccessKeyID: d.keyID, SecretAccessKey: d.secret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(context.Background(), creds, again, r.Header.Get("X-Amz-Content-Sha256"), scope[3], scope[2], at); err != nil {
		return "AccessDenied", "Access Denied"
	}
	_, want, _ := strings.Cut(again.Header.Get("Authorization"), "Signature=")
	if want != sig {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	}
	return "", ""
}

// writeError answers as S3 does: an XML Error document.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	id := strings.ToUpper(hex.EncodeToString(raw))
	var body bytes.Buffer
	body.WriteString(xml.Header)
	_ = xml.NewEncoder(&body).Encode(struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string
		Message   string
		RequestID string `xml:"RequestId"`
		HostID    string `xml:"HostId"`
	}{Code: code, Message: msg, RequestID: id, HostID: id})
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", id)
	w.Header().Set("Content-Length", fmt.Sprint(body.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
}
