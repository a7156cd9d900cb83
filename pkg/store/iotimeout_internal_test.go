package store

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tickReader yields one byte every tick, n times.
type tickReader struct {
	n    int
	tick time.Duration
}

func (r *tickReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.tick)
	r.n--
	p[0] = 'x'
	return 1, nil
}

// TestIOTimeoutKeepsAMovingTransfer: an upload and a download that take
// longer than the timeout but move a byte every 50 ms (a twentieth of it)
// are never cut short, whichever direction moves: one deadline covers the
// connection, and every byte moves it.
func TestIOTimeoutKeepsAMovingTransfer(t *testing.T) {
	const n, tick, timeout = 30, 50 * time.Millisecond, time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			io.WriteString(w, strconv.Itoa(len(b)))
			return
		}
		f := w.(http.Flusher)
		for range n {
			time.Sleep(tick)
			w.Write([]byte{'x'})
			f.Flush()
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: bucketTransport(timeout)}

	resp, err := c.Post(srv.URL, "application/octet-stream", &tickReader{n: n, tick: tick})
	if err != nil {
		t.Fatalf("a slow upload that moves: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != strconv.Itoa(n) {
		t.Fatalf("upload: the server read %q (%v), want %d bytes", got, err, n)
	}

	resp, err = c.Get(srv.URL)
	if err != nil {
		t.Fatalf("a slow download that moves: %v", err)
	}
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(got) != n {
		t.Fatalf("download: %d bytes (%v), want %d", len(got), err, n)
	}
}

// TestGCSCredentialsOutliveTheOpen: an authorized user's credentials (what
// gcloud auth application-default login writes) fetch their token when the
// first request needs it, long after the open returned; the context of the
// open may be gone by then, and the token request goes through the bucket's
// transport.
func TestGCSCredentialsOutliveTheOpen(t *testing.T) {
	tokens := 0
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokens++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"token-1","token_type":"Bearer","expires_in":3600}`)
	}))
	defer tokenSrv.Close()
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization"))
	}))
	defer apiSrv.Close()
	file := filepath.Join(t.TempDir(), "adc.json")
	adc := `{"type":"authorized_user","client_id":"id","client_secret":"secret","refresh_token":"refresh","token_uri":"` + tokenSrv.URL + `"}`
	if err := os.WriteFile(file, []byte(adc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", file)
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("STORAGE_EMULATOR_HOST_GRPC", "")

	ctx, cancel := context.WithCancel(context.Background())
	client, _, err := gcsHTTPClient(ctx, url.Values{}, bucketTransport(time.Minute))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Client.Get(apiSrv.URL)
	if err != nil {
		t.Fatalf("a request after the open's context ended: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "Bearer token-1" || tokens != 1 {
		t.Fatalf("the request carried %q after %d token requests, want Bearer token-1 after 1", got, tokens)
	}
}

// TestIOTimeoutNamesTheHeaderWait: over HTTP/2 a request whose answer does
// not come while another on its connection keeps moving outlasts the
// connection's deadline; it fails once its headers are 1.25 times io_timeout
// late, with an IOTimeoutError that names the setting, and the moving
// download on the same connection is not cut short.
func TestIOTimeoutNamesTheHeaderWait(t *testing.T) {
	const timeout, tick = 400 * time.Millisecond, 50 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stuck" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		f := w.(http.Flusher)
		for range 3 * int(headerWait(timeout)/tick) {
			w.Write([]byte{'x'})
			f.Flush()
			time.Sleep(tick)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	defer close(release)
	rt := bucketTransport(timeout).(headerWaitNamed)
	rt.TLSClientConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := &http.Client{Transport: rt}

	moving, err := c.Get(srv.URL + "/moving")
	if err != nil {
		t.Fatal(err)
	}
	defer moving.Body.Close()
	if moving.ProtoMajor != 2 {
		t.Fatalf("the server answered over %s; the test needs HTTP/2", moving.Proto)
	}
	got := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, moving.Body)
		got <- err
	}()

	_, err = c.Get(srv.URL + "/stuck")
	var iot *IOTimeoutError
	if !errors.As(err, &iot) || iot.Op != "headers" || iot.After != timeout {
		t.Fatalf("a request whose answer does not come: %v, want an IOTimeoutError for the headers after %v", err, headerWait(timeout))
	}
	if !strings.Contains(err.Error(), "io_timeout") {
		t.Errorf("the error does not name io_timeout: %v", err)
	}
	if err := <-got; err != nil {
		t.Errorf("the download moving on the same connection: %v", err)
	}
}
