package storetest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// DeleteFaults stands in front of a real S3 server and makes chosen keys of
// its DeleteObjects requests fail, as S3 reports a failure of one key in an
// otherwise successful response: the key is taken out of the request before
// it reaches the server, so the server really keeps it, and the response
// gets an <Error> for it with the chosen code (or, with the code "", no word
// on it at all). A fault with a count fails only that many requests naming
// the key (a SlowDown that passes); the others fail every time.
type DeleteFaults struct {
	mu     sync.Mutex
	faults map[string]*keyFault
	// Requests counts the DeleteObjects requests that came through.
	requests int
}

type keyFault struct {
	code  string
	times int // 0: always
	seen  int
}

// NewDeleteFaults returns DeleteFaults with no fault, and its wrap function
// for StartS3.
func NewDeleteFaults() (*DeleteFaults, func(http.Handler) http.Handler) {
	d := &DeleteFaults{faults: map[string]*keyFault{}}
	return d, d.wrap
}

// Fail makes key fail with code in the next times requests that name it
// (every request when times is 0). key is the full object key.
func (d *DeleteFaults) Fail(key, code string, times int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults[key] = &keyFault{code: code, times: times}
}

// Requests is how many DeleteObjects requests came through so far.
func (d *DeleteFaults) Requests() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests
}

// Seen is how many DeleteObjects requests named key so far.
func (d *DeleteFaults) Seen(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.faults[key]; ok {
		return f.seen
	}
	return 0
}

type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet,omitempty"`
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId,omitempty"`
	} `xml:"Object"`
}

func (d *DeleteFaults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !r.URL.Query().Has("delete") {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req deleteRequest
		if err := xml.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var injected strings.Builder
		kept := req.Objects[:0]
		d.mu.Lock()
		d.requests++
		for _, o := range req.Objects {
			f, ok := d.faults[o.Key]
			if ok {
				f.seen++
			}
			if !ok || f.times > 0 && f.seen > f.times {
				kept = append(kept, o)
				continue
			}
			if f.code != "" {
				fmt.Fprintf(&injected, "<Error><Key>%s</Key><Code>%s</Code><Message>injected in front of the server</Message></Error>", xmlText(o.Key), xmlText(f.code))
			}
		}
		d.mu.Unlock()
		req.Objects = kept
		out, err := xml.Marshal(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The body changed: the checksums the client sent no longer hold.
		r2 := r.Clone(r.Context())
		for k := range r2.Header {
			if lk := strings.ToLower(k); lk == "content-md5" || strings.HasPrefix(lk, "x-amz-checksum-") || lk == "x-amz-sdk-checksum-algorithm" {
				r2.Header.Del(k)
			}
		}
		r2.Body = io.NopCloser(bytes.NewReader(out))
		r2.ContentLength = int64(len(out))
		r2.Header.Set("Content-Length", strconv.Itoa(len(out)))
		rec := httptest.NewRecorder()
		if len(kept) > 0 {
			next.ServeHTTP(rec, r2)
		} else {
			// S3 refuses an empty Delete: answer as for nothing deleted.
			rec.WriteHeader(http.StatusOK)
			io.WriteString(rec, `<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>`)
		}
		resp := rec.Body.String()
		if rec.Code == http.StatusOK && injected.Len() > 0 {
			i := strings.LastIndex(resp, "</DeleteResult>")
			if i < 0 {
				http.Error(w, "unexpected DeleteObjects response: "+resp, http.StatusInternalServerError)
				return
			}
			resp = resp[:i] + injected.String() + resp[i:]
		}
		for k, vs := range rec.Header() {
			if strings.EqualFold(k, "Content-Length") {
				continue
			}
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		io.WriteString(w, resp)
	})
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
