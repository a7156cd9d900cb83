package verify

import (
	"context"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/sha256pair"
	"github.com/mediactl/mediactl/pkg/store"
)

// pairHashing makes each worker hash two blobs at a time, in step, where the
// CPU has the SHA-NI instructions: one SHA-256 stream leaves most of a core's
// SHA unit idle, two nearly double what a core hashes (sha256pair). Tests turn
// it off to cover the one-at-a-time path too.
var pairHashing = sha256pair.Accelerated()

// lane is one of a pair worker's two blobs being hashed; b.rc is nil when the
// lane is free.
type lane struct {
	b    blobCheck
	d    sha256pair.Digest
	c    chunkReader
	data []byte // read, not hashed yet
}

// refill reads the next chunk when everything read so far is hashed.
func (l *lane) refill(ctx context.Context, progress interface{ Add(int64) }) {
	if len(l.data) == 0 {
		l.data = l.c.next(ctx, progress)
	}
}

// finished says the lane's blob is read and hashed to its end, or failed.
func (l *lane) finished() bool { return len(l.data) == 0 && l.c.ended() }

func (l *lane) active() bool { return l.b.rc != nil }

// pairWorker checks the entries of jobs, hashing two blobs at a time, and sends
// their results in batches.
func (h *hasher) pairWorker(ctx context.Context, jobs <-chan []store.Entry, results chan<- []Result) {
	var lanes [2]lane
	lanes[0].c.buf = h.chunks.buf
	lanes[1].c.buf = make([]byte, len(h.chunks.buf))
	var queue []store.Entry
	var out []Result
	var outBytes int64
	jobsOpen := true
	flush := func() {
		if len(out) > 0 {
			results <- out
			out, outBytes = nil, 0
		}
	}
	// emit queues r, of n bytes hashed. Results go out as the lister's
	// batches do: about batchBytes of content, or maxBatch blobs, at a time.
	emit := func(r Result, n int64) {
		out = append(out, r)
		outBytes += n
		if len(out) >= maxBatch || outBytes >= batchBytes {
			flush()
		}
	}
	// next returns the next entry; it waits for the lister only when wait is set.
	next := func(wait bool) (store.Entry, bool) {
		for len(queue) == 0 && jobsOpen {
			select {
			case batch, ok := <-jobs:
				queue, jobsOpen = batch, ok
				continue
			default:
			}
			if !wait {
				return store.Entry{}, false
			}
			flush() // the collector sees what is done while this worker waits
			batch, ok := <-jobs
			queue, jobsOpen = batch, ok
		}
		if len(queue) == 0 {
			return store.Entry{}, false
		}
		e := queue[0]
		queue = queue[1:]
		return e, true
	}
	for {
		// Keep both lanes busy: start blobs until each lane has one to hash.
		for i := range lanes {
			l := &lanes[i]
			for !l.active() {
				e, ok := next(!lanes[0].active() && !lanes[1].active())
				if !ok {
					break
				}
				b, done := h.begin(ctx, e)
				if done {
					emit(b.r, 0)
					continue
				}
				l.b, l.data = b, nil
				l.c.reset(b.rc, b.r.Key)
				l.d.Reset()
			}
		}
		a, b := &lanes[0], &lanes[1]
		if !a.active() && !b.active() {
			break
		}
		ended := false
		for _, l := range []*lane{a, b} {
			if l.active() {
				l.refill(ctx, h.progress)
				if l.finished() {
					ended = true
					l.b.rc.Close()
					emit(h.end(l.b, blobname.Digest(l.d.Sum256()), l.c.n, l.c.head, l.c.err), l.c.n)
					l.b = blobCheck{}
				}
			}
		}
		if ended {
			continue // start the next blob in the free lane before hashing on
		}
		switch {
		case a.active() && b.active() && len(a.data) > 0 && len(b.data) > 0:
			k := min(len(a.data), len(b.data))
			sha256pair.WritePair(&a.d, a.data[:k], &b.d, b.data[:k])
			a.data, b.data = a.data[k:], b.data[k:]
		case len(a.data) > 0 && !b.active():
			a.d.Write(a.data)
			a.data = nil
		case len(b.data) > 0 && !a.active():
			b.d.Write(b.data)
			b.data = nil
		}
	}
	flush()
}
