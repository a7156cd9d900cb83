package migrate

import (
	"sync"
	"time"
)

// limiter spreads reads over time so that all jobs together stay under a byte
// rate (--bwlimit). It lets a burst of one second through, so that short
// blobs are not each delayed.
type limiter struct {
	rate float64 // bytes per second; 0 means unlimited

	mu   sync.Mutex
	next time.Time // when the bytes granted so far will have been "spent"
}

func newLimiter(bytesPerSecond int64) *limiter {
	return &limiter{rate: float64(bytesPerSecond)}
}

// wait blocks until n more bytes fit under the rate.
func (l *limiter) wait(n int) {
	if l == nil || l.rate <= 0 {
		return
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now.Add(-time.Second)) {
		l.next = now.Add(-time.Second)
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	d := l.next.Sub(now)
	l.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}
