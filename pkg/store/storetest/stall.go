package storetest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// Stall is a TCP proxy on 127.0.0.1 in front of a real server that can stop
// moving bytes, as a service does when it stops answering on a connection
// (a dead peer behind a NAT or load balancer that keeps the connection
// open, a server stuck mid-response). Connections are never closed by a
// stall: only the client's own timeout ends them.
type Stall struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	changed *sync.Cond
	conns   []*stallConn
	stalled int // connections that had bytes to pass while held
	// next is the hold a connection accepted from now on starts with.
	next     hold
	holdNext int // so many more connections accepted are held at once
	closed   bool
}

// hold is what keeps a connection's bytes from moving, now or later.
type hold struct {
	held   bool  // nothing moves
	budget int64 // bytes from the server it passes before it is held (0: no limit)
	// headers: it is held once the server's next response headers have
	// passed; tail is the end of what passed, to find "\r\n\r\n" across
	// reads.
	headers bool
	tail    []byte
}

type stallConn struct {
	client, server net.Conn
	hold
	stalled bool // it had bytes to pass while held
}

// NewStall starts a proxy to target (HOST:PORT) and returns it; it is closed
// when the test ends.
func NewStall(t testing.TB, target string) *Stall {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Stall{ln: ln, target: target}
	s.changed = sync.NewCond(&s.mu)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// Addr is the proxy's address, HOST:PORT.
func (s *Stall) Addr() string { return s.ln.Addr().String() }

// set changes the hold of every open connection with change, and with
// later also the hold connections accepted from now on start with.
func (s *Stall) set(later bool, change func(*hold)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		change(&c.hold)
	}
	if later {
		change(&s.next)
	}
	s.changed.Broadcast()
}

// HoldOpen stalls every connection open now, in both directions; connections
// accepted later flow.
func (s *Stall) HoldOpen() { s.set(false, func(h *hold) { h.held = true }) }

// HoldAll stalls every connection, open now or accepted later.
func (s *Stall) HoldAll() { s.set(true, func(h *hold) { h.held = true }) }

// HoldNext stalls the next n connections accepted, from the start; the ones
// after them flow.
func (s *Stall) HoldNext(n int) {
	s.mu.Lock()
	s.holdNext = n
	s.mu.Unlock()
}

// HoldAfter makes each connection, open now or accepted later, stall in both
// directions once it has passed n more bytes from the server to the client.
func (s *Stall) HoldAfter(n int64) { s.set(true, func(h *hold) { h.budget = n }) }

// HoldAfterHeaders makes each connection, open now or accepted later, stall
// in both directions once the headers of the server's next response on it
// have passed: the client has its answer, and no byte of the body comes.
func (s *Stall) HoldAfterHeaders() { s.set(true, func(h *hold) { h.headers = true }) }

// Release lets every connection flow again and ends every hold.
func (s *Stall) Release() {
	s.set(true, func(h *hold) { *h = hold{} })
	s.mu.Lock()
	s.holdNext = 0
	s.mu.Unlock()
}

func (s *Stall) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.conns {
		c.client.Close()
		c.server.Close()
	}
	s.changed.Broadcast()
}

func (s *Stall) accept() {
	for {
		client, err := s.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", s.target)
		if err != nil {
			client.Close()
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		c := &stallConn{client: client, server: server, hold: s.next}
		if s.holdNext > 0 {
			c.held = true
			s.holdNext--
		}
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		done := make(chan struct{}, 2)
		go s.pipe(c, client, server, true, done)
		go s.pipe(c, server, client, false, done)
		go func() {
			<-done
			client.Close()
			server.Close()
		}()
	}
}

// pipe copies from src to dst while c is not held; fromServer spends c's
// budget.
func (s *Stall) pipe(c *stallConn, dst io.Writer, src io.Reader, fromServer bool, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		p := buf[:n]
		for len(p) > 0 {
			if !s.wait(c) {
				return
			}
			chunk := p
			if fromServer {
				s.mu.Lock()
				if c.budget > 0 && int64(len(chunk)) >= c.budget {
					chunk = chunk[:c.budget]
					c.budget, c.held = 0, true
				} else if c.budget > 0 {
					c.budget -= int64(len(chunk))
				}
				if c.headers {
					seen := append(c.tail, chunk...)
					if i := bytes.Index(seen, []byte("\r\n\r\n")); i >= 0 {
						chunk = chunk[:i+4-len(c.tail)]
						c.headers, c.held, c.tail = false, true, nil
					} else {
						c.tail = append([]byte(nil), seen[max(len(seen)-3, 0):]...)
					}
				}
				s.mu.Unlock()
			}
			if _, werr := dst.Write(chunk); werr != nil {
				return
			}
			p = p[len(chunk):]
		}
		if err != nil {
			return
		}
	}
}

// Stalled is how many connections had bytes to pass while they were held:
// requests or responses the proxy kept from moving.
func (s *Stall) Stalled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled
}

// wait blocks while c is held; it reports false once the proxy is closed.
func (s *Stall) wait(c *stallConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.held && !c.stalled {
		c.stalled = true
		s.stalled++
	}
	for c.held && !s.closed {
		s.changed.Wait()
	}
	return !s.closed
}
