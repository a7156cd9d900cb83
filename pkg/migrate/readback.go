package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
)

// ReadBack says how the check after a rewrite reads the references to the
// copies back: the way the runtime that replays the sessions will.
type ReadBack struct {
	// Replayer opens references as the runtime reads them: the destination
	// bucket allowed, with the template's mount (replay.Bucket.Mount) when
	// the references are paths.
	Replayer *replay.Replayer
	// Reads, when set, says whether the runtime reads a reference of the
	// given text at all (a layout's ReadsPath): one it does not read is
	// unresolved, whatever the bucket holds.
	Reads func(ref string) bool
	// Full reads every copy's bytes and hashes them (--verify-download);
	// otherwise each is stat'ed: there, of the proven size, with the proven
	// sha256 in its name or metadata.
	Full bool
	// Jobs is how many references are read back at once; 0 means DefaultJobs.
	Jobs int
}

// Unresolved is a reference to a copy that does not lead to the proven copy
// as the runtime reads it.
type Unresolved struct {
	Place ref.Place `json:"place"`
	Ref   string    `json:"reference"`
	// Key is the source the reference stands for, kept by --delete-source;
	// "" when the reference names no proven copy's source.
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
}

// readBack collects, during the check's read of the sessions, the distinct
// references whose text names a copy, and reads them back afterwards.
type readBack struct {
	opts     ReadBack
	dst      store.Bucket
	proven   *Proofs
	prefixes []string
	// first is the first place each distinct reference text was found at.
	first map[string]ref.Place
	order []string
}

func newReadBack(opts ReadBack, dst store.Bucket, proven *Proofs, prefixes []string) *readBack {
	if opts.Jobs <= 0 {
		opts.Jobs = DefaultJobs
	}
	return &readBack{opts: opts, dst: dst, proven: proven, prefixes: prefixes, first: map[string]ref.Place{}}
}

// see notes a reference of the check's scan: one whose text lies below a
// copy prefix names a copy, and is read back.
func (rb *readBack) see(f scan.Found) {
	if f.Status == ref.Inside || f.Ref.Kind == ref.BucketPair {
		return
	}
	text := f.Ref.Raw
	if !slices.ContainsFunc(rb.prefixes, func(p string) bool { return strings.HasPrefix(text, p) }) {
		return
	}
	if _, seen := rb.first[text]; seen {
		return
	}
	rb.first[strings.Clone(text)] = f.Place
	rb.order = append(rb.order, strings.Clone(text))
}

// check reads every collected reference back and adds the outcome to cr:
// the references that resolve to their proven copies are counted, the others
// listed, and the sources they stand for marked as referenced (kept). A nil
// rb reads nothing back.
func (rb *readBack) check(ctx context.Context, cr *CheckReport) {
	if rb == nil {
		return
	}
	maxListed := cr.maxListed
	cr.ReadBackFull = rb.opts.Full
	work := make(chan string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(rb.opts.Jobs, max(1, len(rb.order))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for text := range work {
				key, ours, reason := rb.one(ctx, text)
				mu.Lock()
				switch {
				case reason == "" && ours:
					cr.ReadBack++
				case reason == "":
					cr.ReadBackOther++
					if rb.proven.LeftAlone(key) {
						cr.ReadBackLeftAlone++
					}
				default:
					cr.Unresolved++
					if key != "" {
						cr.Referenced[key] = true
					} else {
						cr.UnresolvedUnknown++
					}
					if len(cr.UnresolvedList) < maxListed {
						cr.UnresolvedList = append(cr.UnresolvedList, Unresolved{Place: rb.first[text], Ref: text, Key: key, Reason: reason})
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, text := range rb.order {
		if ctx.Err() != nil {
			break
		}
		work <- text
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		cr.Complete = false
		cr.Problems = append(cr.Problems, "reading the copies back: "+ctx.Err().Error())
	}
	slices.SortFunc(cr.UnresolvedList, func(a, b Unresolved) int { return strings.Compare(a.Place.String(), b.Place.String()) })
}

// one reads the reference text back. It returns the source key the
// reference stands for ("" when none; for a verified object this run holds
// no proof of, the key of the object), whether it resolved to that source's
// proven copy, and, when it did not resolve, why.
func (rb *readBack) one(ctx context.Context, text string) (key string, ours bool, reason string) {
	key = rb.sourceOf(text)
	if rb.opts.Reads != nil && !rb.opts.Reads(text) {
		return key, false, "the runtime does not read a reference written this way"
	}
	var info replay.Info
	var err error
	if rb.opts.Full {
		info, err = readAll(ctx, rb.opts.Replayer, text)
	} else {
		info, err = rb.opts.Replayer.Stat(ctx, text)
	}
	if err != nil {
		return key, false, err.Error()
	}
	base := objectURL(rb.dst, "")
	got, isCopy := strings.CutPrefix(info.Location, base)
	if !isCopy {
		return key, false, fmt.Sprintf("the runtime reads %s, not a copy in %s", info.Location, rb.dst.Location())
	}
	p, proven := rb.proven.Get(got)
	switch {
	case !proven:
		// A verified object this run holds no proof of: it replays.
		return got, false, ""
	case key != "" && key != got:
		return key, false, fmt.Sprintf("the runtime reads the copy of %s", got)
	case info.SHA256 != p.Digest():
		return got, false, fmt.Sprintf("the copy's sha256 is %s, the proven one %s", info.SHA256, p.Digest())
	case info.Size >= 0 && info.Size != p.Size:
		return got, false, fmt.Sprintf("the copy is %d bytes, the proven one %d", info.Size, p.Size)
	}
	return got, true, ""
}

// sourceOf is the proven source key the reference text stands for: the rest
// of the text after the copy prefix it starts with, without the
// destination's prefix, when that is a proven key.
func (rb *readBack) sourceOf(text string) string {
	for _, p := range rb.prefixes {
		rest, ok := strings.CutPrefix(text, p)
		if !ok {
			continue
		}
		for _, k := range []string{strings.TrimPrefix(rest, rb.dst.Prefix()), rest} {
			if _, ok := rb.proven.Get(k); ok {
				return k
			}
		}
	}
	return ""
}

// readAll reads the reference through the replayer to its end: the final
// Read fails unless the bytes hash to the digest Info names.
func readAll(ctx context.Context, r *replay.Replayer, text string) (replay.Info, error) {
	rc, info, err := r.Open(ctx, text)
	if err != nil {
		return info, err
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err != nil {
		return info, err
	}
	if info.Size < 0 {
		info.Size = n
	}
	if !info.Verified {
		return info, errors.New("the bytes could not be verified (no sha256 to check them against)")
	}
	return info, nil
}
