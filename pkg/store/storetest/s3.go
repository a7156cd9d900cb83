package storetest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 is an S3 server for tests: gofakes3 with an in-memory backend, speaking
// the real protocol on 127.0.0.1, stopped when the test ends.
type S3 struct {
	Backend  *s3mem.Backend
	Endpoint string // http://127.0.0.1:PORT
}

// StartS3 starts the server. wrap, when not nil, wraps its handler (to inject
// faults such as 503 SlowDown in front of the real server). It sets static
// credentials in the environment and points the AWS config files at nothing,
// so that no client goes looking for cloud credentials or a metadata endpoint.
func StartS3(t testing.TB, wrap func(http.Handler) http.Handler) *S3 {
	backend := s3mem.New()
	var h http.Handler = gofakes3.New(backend).Server()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	setAWSEnv(t, "mediactl-test", "mediactl-test-secret")
	return &S3{Backend: backend, Endpoint: srv.URL}
}

// setAWSEnv gives the test static credentials and points the AWS config files
// at nothing, so that no client goes looking for cloud credentials or a
// metadata endpoint.
func setAWSEnv(t testing.TB, key, secret string) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           key,
		"AWS_SECRET_ACCESS_KEY":       secret,
		"AWS_SESSION_TOKEN":           "",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(t.TempDir(), "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "no-credentials"),
	} {
		t.Setenv(k, v)
	}
}

// Query is the URL query that reaches this server: endpoint, path-style
// addressing, region.
func (s *S3) Query() string { return s3Query(s.Endpoint) }

// Bucket creates bucket name and returns its URL ("s3://name?…").
func (s *S3) Bucket(t testing.TB, name string) string {
	t.Helper()
	if err := s.Backend.CreateBucket(name); err != nil {
		t.Fatal(err)
	}
	return "s3://" + name + "?" + s.Query()
}

// SlowDown makes an S3 server answer 503 SlowDown — S3's "reduce your request
// rate" — to the first PerKey requests of one method for every key, before it
// passes requests on. Three or more outlast the retries of the AWS SDK itself,
// so a caller's own backoff is what gets the work done.
type SlowDown struct {
	method string
	perKey int

	mu      sync.Mutex
	seen    map[string]int
	refused int
}

// NewSlowDown returns a SlowDown for method and its wrap function for StartS3.
func NewSlowDown(method string, perKey int) (*SlowDown, func(http.Handler) http.Handler) {
	s := &SlowDown{method: method, perKey: perKey, seen: map[string]int{}}
	return s, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == s.method {
				s.mu.Lock()
				s.seen[r.URL.Path]++
				refuse := s.seen[r.URL.Path] <= s.perKey
				if refuse {
					s.refused++
				}
				s.mu.Unlock()
				if refuse {
					io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/xml")
					w.WriteHeader(http.StatusServiceUnavailable)
					io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Refused is how many requests were answered 503 so far.
func (s *SlowDown) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// LostAnswer makes an S3 server act on the first request that match accepts
// and then drop the connection before its answer reaches the client, as a
// reset connection or a timeout does after the service acted. The SDK then
// retries a request the service already carried out.
type LostAnswer struct {
	match func(*http.Request) bool

	mu   sync.Mutex
	lost int
}

// NewLostAnswer returns a LostAnswer for the requests match accepts and its
// wrap function for StartS3.
func NewLostAnswer(match func(*http.Request) bool) (*LostAnswer, func(http.Handler) http.Handler) {
	l := &LostAnswer{match: match}
	return l, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.mu.Lock()
			lose := l.lost == 0 && l.match(r)
			if lose {
				l.lost++
			}
			l.mu.Unlock()
			if lose {
				next.ServeHTTP(httptest.NewRecorder(), r)
				panic(http.ErrAbortHandler) // the server closes the connection, answering nothing
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Lost is how many answers were dropped so far (0 or 1).
func (l *LostAnswer) Lost() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}
