package storetest

import (
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
	stalled int   // connections that had bytes to pass while held
	newHold bool  // connections accepted from now on stall at once
	after   int64 // new connections stall after this many bytes from the server (0: never)
	closed  bool
}

type stallConn struct {
	held    bool  // set by HoldOpen, or once the connection used up its budget
	stalled bool  // it had bytes to pass while held
	budget  int64 // bytes from the server it passes before it is held (0: no limit)
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

// HoldOpen stalls every connection open now, in both directions; connections
// accepted later flow.
func (s *Stall) HoldOpen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.held = true
	}
}

// HoldAll stalls every connection, open now or accepted later.
func (s *Stall) HoldAll() {
	s.HoldOpen()
	s.mu.Lock()
	s.newHold = true
	s.mu.Unlock()
}

// HoldAfter makes each connection, open now or accepted later, stall in both
// directions once it has passed n more bytes from the server to the client.
func (s *Stall) HoldAfter(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.after = n
	for _, c := range s.conns {
		c.budget = n
	}
}

// Release lets every connection flow again and ends HoldAll and HoldAfter.
func (s *Stall) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.newHold, s.after = false, 0
	for _, c := range s.conns {
		c.held, c.budget = false, 0
	}
	s.changed.Broadcast()
}

func (s *Stall) close() {
	s.ln.Close()
	s.mu.Lock()
	s.closed = true
	s.changed.Broadcast()
	s.mu.Unlock()
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
		c := &stallConn{held: s.newHold, budget: s.after}
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
