package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// DefaultIOTimeout is how long a bucket connection may go without moving a
// byte, in either direction, while a request is on it, before the request
// fails: the io_timeout= URL parameter changes it, io_timeout=0 turns it off.
// Five minutes, as restic's stuck-request timeout and rclone's --timeout:
// long enough for a server-side copy of a large object, which S3 keeps alive
// with whitespace and GCS answers in rewrite steps, and short enough that a
// nightly run whose service stopped answering on a connection ends instead of
// waiting for ever.
const DefaultIOTimeout = 5 * time.Minute

// IOTimeoutError is the error of a read or write on a bucket connection that
// moved no byte for After (io_timeout), or of a request whose answer's
// headers did not come within 1.25 times After (Op "headers", over HTTP/2).
// It is a network timeout (Timeout and Temporary report true), so the
// services' SDKs retry the request on a new connection where the request
// allows it; a body being read fails with it.
type IOTimeoutError struct {
	After time.Duration
	Op    string // "read", "write" or "headers"
	Err   error  // the connection's or the transport's own error
}

func (e *IOTimeoutError) Error() string {
	switch e.Op {
	case "headers":
		return fmt.Sprintf("no answer from the service within %v (1.25 × io_timeout of %v): %v", headerWait(e.After), e.After, e.Err)
	case "write":
		return fmt.Sprintf("no data to the service for %v (io_timeout): %v", e.After, e.Err)
	}
	return fmt.Sprintf("no data from the service for %v (io_timeout): %v", e.After, e.Err)
}
func (e *IOTimeoutError) Unwrap() error { return e.Err }

// Timeout reports true: the error is a network timeout (net.Error).
func (e *IOTimeoutError) Timeout() bool { return true }

// Temporary reports true, which the SDKs' retry policies test for.
func (e *IOTimeoutError) Temporary() bool { return true }

var _ net.Error = (*IOTimeoutError)(nil)

// parseIOTimeout reads the io_timeout= URL parameter: a Go duration ("90s",
// "10m"), "0" for none.
func parseIOTimeout(raw string) (time.Duration, error) {
	d, err := time.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, usagef("io_timeout=%s: write a duration such as 90s or 10m, or 0 for none", raw)
	case d < 0:
		return 0, usagef("io_timeout=%s: a timeout is not negative; write 0 for none", raw)
	}
	return d, nil
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// withIOTimeout makes tr's connections fail once they have moved no byte, in
// either direction, for timeout (none when timeout is 0). Every byte read or
// written moves the connection's deadline, so only a connection without
// progress fails, however long the transfer: unlike a whole-request timeout,
// a large download or upload is never cut short. The transport's own read of an idle pooled connection would hit
// the deadline too; idle connections are closed by the pool before that
// (IdleConnTimeout at most half the timeout), so a request is never sent on a
// connection about to time out. Over HTTP/2, where requests share a
// connection, each answer's headers must come within 1.25 times timeout; a body
// stalled while others on its connection move fails only once the
// connection has gone quiet for timeout.
func withIOTimeout(tr *http.Transport, timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	dial := tr.DialContext
	if dial == nil {
		dial = bucketDialer.DialContext
	}
	tr.DialContext = ioTimeoutDial(dial, timeout)
	if tr.IdleConnTimeout == 0 || tr.IdleConnTimeout > timeout/2 {
		tr.IdleConnTimeout = timeout / 2
	}
	// Over HTTP/2, requests share a connection, and one whose answer does
	// not come while others move would outlast the connection's deadline:
	// the wait for each answer's headers is bounded on its own, a quarter
	// longer than the deadline, which on a connection of its own fails
	// first.
	if wait := headerWait(timeout); tr.ResponseHeaderTimeout == 0 || tr.ResponseHeaderTimeout > wait {
		tr.ResponseHeaderTimeout = wait
	}
}

// headerWait is how long a request with io_timeout timeout waits for its
// answer's headers once it has been sent.
func headerWait(timeout time.Duration) time.Duration { return timeout + timeout/4 }

// headerWaitNamed is a transport with an I/O timeout whose requests fail with
// an IOTimeoutError (Op "headers") when their answer's headers did not come
// in time, rather than with net/http's own error, which says neither which
// setting ran out nor how to change it. net/http keeps that error's types to
// itself; what is known of it is that it is a timeout, and its message,
// which TestIOTimeoutNamesTheHeaderWait checks on every Go the suite runs
// with. Over HTTP/1.1, where a request has its connection to itself, the
// connection's deadline comes first; this is HTTP/2's case.
type headerWaitNamed struct {
	*http.Transport
	timeout time.Duration // io_timeout
}

func (t headerWaitNamed) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.Transport.RoundTrip(req)
	var ne net.Error
	var iot *IOTimeoutError
	if err != nil && t.timeout > 0 && errors.As(err, &ne) && ne.Timeout() &&
		!errors.As(err, &iot) && strings.Contains(err.Error(), "timeout awaiting response headers") {
		return nil, &IOTimeoutError{After: t.timeout, Op: "headers", Err: err}
	}
	return resp, err
}

func ioTimeoutDial(dial dialFunc, timeout time.Duration) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &ioTimeoutConn{Conn: c, timeout: timeout}, nil
	}
}

// ioTimeoutConn is a connection that fails once it has moved no byte, in
// either direction, for timeout. One deadline covers reads and writes, and
// every read or write that moves a byte moves it: over HTTP/1.1 a read is
// pending on the connection while the request is still being sent, and must
// not time out while the upload moves. Writes go in pieces of ioTimeoutChunk,
// so that a large write to a slow but moving peer moves the deadline too.
type ioTimeoutConn struct {
	net.Conn
	timeout time.Duration
}

// ioTimeoutChunk is the largest piece a write is sent in.
const ioTimeoutChunk = 64 << 10

// touch moves the connection's deadline to timeout from now.
func (c *ioTimeoutConn) touch() error {
	return c.Conn.SetDeadline(time.Now().Add(c.timeout))
}

func (c *ioTimeoutConn) Read(p []byte) (int, error) {
	if err := c.touch(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, c.wrap("read", err)
}

func (c *ioTimeoutConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		if err := c.touch(); err != nil {
			return written, err
		}
		n, err := c.Conn.Write(p[written:min(len(p), written+ioTimeoutChunk)])
		written += n
		if err != nil {
			return written, c.wrap("write", err)
		}
	}
	if written > 0 {
		c.touch()
	}
	return written, nil
}

func (c *ioTimeoutConn) wrap(op string, err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return &IOTimeoutError{After: c.timeout, Op: op, Err: err}
	}
	return err
}

// bucketTransport is the HTTP transport of gs:// and azblob:// buckets: the
// settings of net/http's default transport (proxy from the environment,
// HTTP/2, dial and handshake timeouts), built here rather than cloned from
// http.DefaultTransport, which a program embedding this package may have
// replaced; the TLS settings of the Azure SDK's own transport (TLS 1.2 at
// least, renegotiation as a client); idle connections for every request
// mediactl has in flight at once (net/http keeps 2 per host, the Azure SDK
// 10: the rest would open a new connection for each request); and the I/O
// timeout, which takes the place of the Azure SDK's HTTP/2 pings.
func bucketTransport(timeout time.Duration) http.RoundTripper {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           bucketDialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          bucketIdleConnsPerHost,
		MaxIdleConnsPerHost:   bucketIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, Renegotiation: tls.RenegotiateFreelyAsClient},
	}
	withIOTimeout(tr, timeout)
	return headerWaitNamed{tr, timeout}
}

// bucketDialer dials as net/http's default transport does.
var bucketDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// bucketIdleConnsPerHost is how many idle connections a bucket client keeps
// to its service: more than any command of mediactl has requests in flight.
const bucketIdleConnsPerHost = 128
