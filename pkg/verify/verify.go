// Package verify proves that the blobs of a store are intact: every
// content-addressed blob is read in full and its sha256 compared with its name.
//
// Run only reads. It classifies each blob (ok, corrupt, unverifiable,
// unreadable), notes anomalies that are not corruption but deserve an
// operator's eye (symlinks, non-regular files, leftover temporary files, empty
// blobs, an extension that contradicts the content, permissions wider than the
// rest of the store), and returns a Report. Taking corrupt blobs out of the
// store is a separate, explicit step: RunStores with a Quarantine store moves
// them there under each store's lock.
//
// Hashing streams each blob through SHA-256 on Jobs workers. Where the CPU has
// the SHA-NI instructions, each worker hashes two blobs in step
// (pkg/sha256pair), which nearly doubles what a core hashes; elsewhere, and
// with Jobs == 1, one blob at a time through crypto/sha256.
package verify

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/mediatype"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// Category is the verdict on one blob.
type Category string

const (
	// OK: the content hashes to the name (or to the sha256 in its metadata).
	OK Category = "ok"
	// Corrupt: the content hashes to something else.
	Corrupt Category = "corrupt"
	// Unverifiable: an opaque name with no stored sha256: only its existence
	// and size could be checked.
	Unverifiable Category = "unverifiable"
	// Unreadable: an I/O error stopped the check; the run is incomplete.
	Unreadable Category = "unreadable"
)

// AnomalyKind names something odd about an entry that is not corruption.
type AnomalyKind string

const (
	Symlink         AnomalyKind = "symlink"          // never followed; Detail is the target
	NotRegular      AnomalyKind = "not-regular"      // fifo, socket, device, …
	Temporary       AnomalyKind = "temporary"        // leftover of an interrupted write
	Empty           AnomalyKind = "empty"            // zero bytes
	WrongExtension  AnomalyKind = "wrong-extension"  // content's magic bytes say another type
	WidePermissions AnomalyKind = "wide-permissions" // readable or writable by more than the rest of the store
)

// Anomaly is one odd entry.
type Anomaly struct {
	Key    string      `json:"key"`
	Kind   AnomalyKind `json:"kind"`
	Detail string      `json:"detail"`
}

// Result is the check of one blob.
type Result struct {
	Key      string   `json:"key"`
	Size     int64    `json:"size"`
	Category Category `json:"category"`
	// Expected is the digest the blob should have: from its name, or from the
	// sha256 in its metadata. Actual is what its content hashes to.
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// How says how the verdict was reached: "sha256" (read in full), "metadata"
	// (--fast: size and stored sha256), "exists" (opaque name).
	How string `json:"how"`
	Err string `json:"error,omitempty"`
	// Referenced is set when sessions were read and some session refers to the
	// blob (the conservative retention rule).
	Referenced bool `json:"referenced,omitempty"`

	mode fs.FileMode // local stores: type and permissions of the file checked
	// magic is set when the content's first bytes contradict the extension.
	magic       AnomalyKind
	magicDetail string
}

// Subset selects a deterministic part of the store: part N of T (1 ≤ N ≤ T).
// Runs with N = 1..T together check every blob exactly once.
type Subset struct{ N, T int }

// Options configure Run.
type Options struct {
	Store store.Store
	// Jobs is the number of hashing workers; 0 means one per CPU, and on a
	// bucket at least BucketReaders. On a local store each reads two blobs
	// at a time where it hashes them in step; with 1, a single blob is read
	// at a time: use it on spinning disks, where parallel reads are several
	// times slower.
	Jobs int
	// Subset, when T > 0, checks only part N of T.
	Subset Subset
	// Sample, when in (0, 1), checks a random fraction of the blobs.
	Sample float64
	// Seed seeds Sample's choice; 0 picks a random seed.
	Seed uint64
	// Fast checks bucket objects by size and stored sha256 metadata instead of
	// downloading them. It has no effect on local stores.
	Fast bool
	// Sessions, when given, are read too: the report then lists dangling
	// references (Scan), counts orphans — blobs no session refers to under the
	// retention rule — and lists corrupt blobs that sessions refer to first.
	Sessions []sessions.Source
	// Bases are directories relative references are relative to (a forge work
	// directory).
	Bases []string
	// Resolver places references in the store; derived from Store and Bases
	// when nil (a layout gives one that knows its aliases and home).
	Resolver *ref.Resolver
	// Companion names the owner of a sidecar that lives and dies with it
	// (retain.MarkOptions.Companion).
	Companion func(key string) (owner string, ok bool)
	// MaxListed caps each list of the report (counts stay exact); 0 means 10,000.
	MaxListed int
	// KeepCorrupt keeps every corrupt blob in Report.AllCorrupt, whatever
	// MaxListed: what a quarantine moves.
	KeepCorrupt bool
	// Progress, when set, is told about bytes hashed.
	Progress interface{ Add(int64) }
	// OnResult, when set, is called for every blob checked, from one goroutine.
	OnResult func(Result)
	// Shard, when sharded, verifies only that shard's blobs (retain.InShard) and
	// reports only the dangling references and orphans that are its own: the
	// N shards of a split together check every blob exactly once.
	Shard shard.Spec
}

// Report is the outcome of Run.
type Report struct {
	Store string `json:"store"`
	// Shard is the part of the store verified, "K/N" ("" for all of it).
	Shard string `json:"shard,omitempty"`
	// Mode is "full" (every selected blob read and hashed) or "fast".
	Mode string `json:"mode"`
	// Blobs is how many blobs the store holds (regular files and objects);
	// Selected how many of them this run was to check (--subset, --sample).
	Blobs    int64   `json:"blobs"`
	Selected int64   `json:"selected"`
	Fraction float64 `json:"fraction"`
	// Counts per category, over the selected blobs.
	Counts map[Category]int64 `json:"counts"`
	// NotAttempted counts selected blobs whose check an interrupt stopped
	// (an error while the run was being cancelled): they are in no
	// category, and the next run checks them.
	NotAttempted int64 `json:"not_attempted"`
	// BytesRead is the bytes hashed; Seconds the time the run took.
	BytesRead int64   `json:"bytes_read"`
	Seconds   float64 `json:"seconds"`

	Corrupt    []Result `json:"corrupt"`
	Unreadable []Result `json:"unreadable"`
	// AllCorrupt is every corrupt blob, with Options.KeepCorrupt.
	AllCorrupt   []Result  `json:"-"`
	Anomalies    []Anomaly `json:"anomalies"`
	AnomalyCount int64     `json:"anomaly_count"`
	// Truncated is set when a list was cut at MaxListed.
	Truncated bool `json:"truncated,omitempty"`

	// Sessions is set when sessions were read: dangling references, orphans.
	Sessions *SessionsReport `json:"sessions,omitempty"`

	// Complete is false when a blob, the listing or a session could not be read.
	Complete    bool   `json:"complete"`
	Interrupted bool   `json:"interrupted,omitempty"`
	ListError   string `json:"list_error,omitempty"`
}

// SessionsReport is what verify learned from the sessions.
type SessionsReport struct {
	// Scan is the scan of the sessions against this store: its dangling
	// references, and whether every session was read.
	Scan *scan.Report `json:"scan"`
	// Orphans are blobs no session refers to under the retention rule.
	Orphans     int64 `json:"orphans"`
	OrphanBytes int64 `json:"orphan_bytes"`
	// ReferencedCorrupt counts corrupt blobs that a session refers to.
	ReferencedCorrupt int64 `json:"referenced_corrupt"`
}

// ReferencedCorrupt counts the corrupt blobs that a session refers to: the
// breakage users see.
func (r *Report) ReferencedCorrupt() int64 {
	var n int64
	for _, c := range r.Corrupt {
		if c.Referenced {
			n++
		}
	}
	return n
}

// maxBatch is how many small blobs travel together between the lister, the
// hashers and the collector: one channel hand-off per blob costs more than
// hashing a 4 KiB blob. Large blobs travel alone, so that no hasher is left
// with a long queue while the other is idle at the end (see batchSize).
const maxBatch = 64

// batchBytes is how much content a batch carries, about.
const batchBytes = 1 << 20

// batchSize sizes batches to about batchBytes of content, from the mean size
// of the blobs hashed so far.
func batchSize(bytes, blobs int64) int {
	if blobs == 0 {
		return 1
	}
	mean := max(bytes/blobs, 1)
	return int(min(max(batchBytes/mean, 1), maxBatch))
}

// Validate checks the options before anything is read.
func (o *Options) Validate() error {
	switch t := o.Subset.T; {
	case o.Store == nil:
		return errors.New("verify: no store")
	case t != 0 && (t < 1 || o.Subset.N < 1 || o.Subset.N > t):
		return fmt.Errorf("verify: subset %d/%d: want n/t with 1 <= n <= t", o.Subset.N, o.Subset.T)
	case o.Sample < 0 || o.Sample > 1:
		return fmt.Errorf("verify: sample %g: want a fraction in (0, 1]", o.Sample)
	}
	return nil
}

// Run checks the store. It returns an error only for invalid options;
// everything that goes wrong while checking is in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	// --jobs 1 is for disks that read one file at a time best: a pair
	// worker would interleave reads of two. A default of one job (one CPU)
	// is not such a request.
	serial := opts.Jobs == 1
	_, isBucket := opts.Store.(store.Bucket)
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
		if isBucket {
			opts.Jobs = max(opts.Jobs, BucketReaders)
		}
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10000
	}
	fast := opts.Fast && isBucket
	rep := &Report{Store: opts.Store.Location(), Shard: opts.Shard.String(), Mode: "full", Complete: true,
		Counts:  map[Category]int64{OK: 0, Corrupt: 0, Unverifiable: 0, Unreadable: 0},
		Corrupt: []Result{}, Unreadable: []Result{}, Anomalies: []Anomaly{}}
	if fast {
		rep.Mode = "fast"
	}
	start := time.Now()
	var idx *sessionIndex
	if len(opts.Sessions) > 0 {
		var err error
		if idx, err = readSessions(ctx, opts, rep); err != nil {
			return nil, err
		}
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	sampler := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	var hashedBytes, hashedBlobs atomic.Int64 // for batchSize
	jobs := make(chan []store.Entry, 2*opts.Jobs)
	results := make(chan []Result, 2*opts.Jobs)
	var wg sync.WaitGroup
	for range opts.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := newHasher(opts.Store, fast, opts.Progress)
			if pairHashing && !isBucket && !serial {
				h.pairWorker(ctx, jobs, results)
				return
			}
			for entries := range jobs {
				out := make([]Result, len(entries))
				for i, e := range entries {
					out[i] = h.check(ctx, e)
				}
				results <- out
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	// The listing runs in its own goroutine; this one collects results.
	perms := newPermCensus(opts.MaxListed)      // the collector's: blobs hashed
	listPerms := newPermCensus(opts.MaxListed)  // the lister's: entries not hashed
	anomalies := newAnomalyList(opts.MaxListed) // the lister's
	var listErr error
	var listed, selected int64
	go func() {
		defer close(jobs)
		pending := make([]store.Entry, 0, maxBatch)
		flush := func() error {
			if len(pending) == 0 {
				return nil
			}
			select {
			case jobs <- pending:
				pending = make([]store.Entry, 0, maxBatch)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		defer func() {
			if listErr == nil {
				listErr = flush()
			}
		}()
		visit := func(e store.Entry) error {
			if !retain.InShard(opts.Shard, e.Key, opts.Companion) {
				return nil // another shard's
			}
			if a, skip := entryAnomaly(e); skip {
				anomalies.add(a)
				return nil
			}
			if blobname.IsTemporary(e.Key) {
				anomalies.add(Anomaly{e.Key, Temporary, "leftover of an interrupted write; not a blob"})
				if e.Mode != 0 {
					listPerms.add(e.Key, e.Mode.Perm())
				}
				return nil
			}
			listed++
			if !selectedBy(e.Key, opts.Subset) || (opts.Sample > 0 && opts.Sample < 1 && sampler.Float64() >= opts.Sample) {
				if e.Mode != 0 {
					listPerms.add(e.Key, e.Mode.Perm())
				}
				return nil
			}
			selected++
			if pending = append(pending, e); len(pending) >= batchSize(hashedBytes.Load(), hashedBlobs.Load()) {
				return flush()
			}
			return nil
		}
		// A store that lists keys without describing them and describes what
		// it opens (a local store) saves a stat per blob: a reader of every
		// blob needs no more.
		if kl, ok := store.AsKeyLister(opts.Store); ok {
			listErr = kl.ListKeys(ctx, "", func(e store.Entry) error {
				if e.Size < 0 {
					// A regular file, not described yet: the worker that opens
					// it learns its size, time and mode from the file itself.
					if blobname.IsTemporary(e.Key) {
						if st, err := opts.Store.Stat(ctx, e.Key); err == nil {
							e = st
						}
					}
				}
				return visit(e)
			})
			return
		}
		// Another shard's keys are dropped before a key-order listing holds
		// their names (a file:// bucket's sorts each folder).
		owned := func(key string) bool { return retain.InShard(opts.Shard, key, opts.Companion) }
		listErr = store.ListSelected(ctx, opts.Store, "", owned, visit)
	}()

	resultAnomalies := newAnomalyList(opts.MaxListed) // the hashers'
	collect := func(r Result) {
		if r.Category == Unreadable && ctx.Err() != nil {
			// Stopped by the interrupt, not by the store: not a finding.
			rep.NotAttempted++
			return
		}
		hashedBytes.Add(r.Size)
		hashedBlobs.Add(1)
		if r.mode != 0 {
			perms.add(r.Key, r.mode.Perm())
		}
		if idx != nil {
			r.Referenced = idx.referenced(r.Key)
		}
		rep.Counts[r.Category]++
		switch r.Category {
		case Corrupt:
			rep.list(&rep.Corrupt, r, opts.MaxListed)
			if opts.KeepCorrupt {
				rep.AllCorrupt = append(rep.AllCorrupt, r)
			}
		case Unreadable:
			rep.Complete = false
			rep.list(&rep.Unreadable, r, opts.MaxListed)
		}
		if r.Size == 0 && r.Category != Unreadable {
			resultAnomalies.add(Anomaly{r.Key, Empty, "zero bytes"})
		}
		if r.How == "sha256" {
			rep.BytesRead += r.Size
		}
		if opts.OnResult != nil {
			opts.OnResult(r)
		}
		if r.magic != "" {
			resultAnomalies.add(Anomaly{r.Key, r.magic, r.magicDetail})
		}
	}
	for rs := range results {
		for _, r := range rs {
			collect(r)
		}
	}
	// results is closed only after the listing goroutine closed jobs.
	if listErr != nil {
		rep.Complete = false
		if errors.Is(listErr, context.Canceled) {
			rep.Interrupted = true
		} else {
			rep.ListError = listErr.Error()
		}
	}
	if ctx.Err() != nil {
		rep.Interrupted, rep.Complete = true, false
	}
	rep.Blobs, rep.Selected = listed, selected
	if listed > 0 {
		rep.Fraction = float64(selected) / float64(listed)
	}
	perms.merge(listPerms) // the lister is done: results is closed after jobs
	all := newAnomalyList(opts.MaxListed)
	for _, a := range anomalies.sorted() {
		all.add(a)
	}
	for _, a := range resultAnomalies.sorted() {
		all.add(a)
	}
	wide := perms.wide()
	for _, a := range wide {
		all.add(a)
	}
	rep.AnomalyCount = anomalies.n + resultAnomalies.n + int64(len(wide))
	rep.Anomalies = all.sorted()
	if rep.AnomalyCount > int64(len(rep.Anomalies)) {
		rep.Truncated = true
	}
	// Corrupt blobs that sessions refer to are user-visible breakage: first.
	sort.SliceStable(rep.Corrupt, func(i, j int) bool {
		a, b := rep.Corrupt[i], rep.Corrupt[j]
		if a.Referenced != b.Referenced {
			return a.Referenced
		}
		return a.Key < b.Key
	})
	sort.Slice(rep.Unreadable, func(i, j int) bool { return rep.Unreadable[i].Key < rep.Unreadable[j].Key })
	sort.Slice(rep.AllCorrupt, func(i, j int) bool { return rep.AllCorrupt[i].Key < rep.AllCorrupt[j].Key })
	if idx != nil {
		rep.Sessions.Orphans, rep.Sessions.OrphanBytes = idx.orphans()
		rep.Sessions.ReferencedCorrupt = rep.ReferencedCorrupt()
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func (r *Report) list(l *[]Result, res Result, max int) {
	if len(*l) >= max {
		r.Truncated = true
		return
	}
	*l = append(*l, res)
}

// entryAnomaly reports entries that are not blobs at all: symlinks (never
// followed) and other non-regular files.
func entryAnomaly(e store.Entry) (Anomaly, bool) {
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		return Anomaly{e.Key, Symlink, "points to " + e.Link + " (not followed)"}, true
	case !e.Regular():
		return Anomaly{e.Key, NotRegular, e.Mode.Type().String()}, true
	}
	return Anomaly{}, false
}

// selectedBy places a key in part N of T by a hash that does not depend on the
// run: the digest of a content-addressed name, else FNV-1a of the key.
func selectedBy(key string, s Subset) bool {
	if s.T <= 1 {
		return true
	}
	var h uint64
	if n, ok := blobname.Parse(key); ok && path.Base(key) == key {
		h = binary.BigEndian.Uint64(n.Digest[:8])
	} else {
		f := fnv.New64a()
		io.WriteString(f, key)
		h = f.Sum64()
	}
	return int(h%uint64(s.T)) == s.N-1
}

type hasher struct {
	sum      hash.Hash
	st       store.Store
	kl       store.KeyLister // st's, when it offers one: opens entries ListKeys left undescribed
	fast     bool
	chunks   chunkReader
	progress interface{ Add(int64) }
}

// BucketReaders is how many blobs Run reads at once from a bucket when
// Options.Jobs is 0. A bucket's reads wait on the network — a request's first
// byte takes milliseconds, a 100 KiB object streams in about as long — while
// hashing it takes 70 µs, so one worker per CPU leaves the service idle
// between requests; 16 readers keep it busy. Each holds one read buffer
// (readBufferSize), so the bytes in flight are 16 × 256 KiB = 4 MiB, whatever
// the size of the blobs. (A worker hashing two blobs in step is for local
// files, where the CPU is what limits.)
const BucketReaders = 16

// readBufferSize: each 256 KiB chunk read is still in the core's L2 cache when
// the hash reads it (measured ~5% faster than 1 MiB on 2 GiB of blobs).
const readBufferSize = 256 << 10

func newHasher(st store.Store, fast bool, progress interface{ Add(int64) }) *hasher {
	kl, _ := store.AsKeyLister(st)
	return &hasher{st: st, kl: kl, fast: fast, chunks: chunkReader{buf: make([]byte, readBufferSize)}, progress: progress}
}

// chunkReader reads one blob's content a buffer at a time and keeps what every
// hasher needs besides the digest: the first bytes (for the magic-number
// check), the length, progress, and a read error in the report's words.
type chunkReader struct {
	rc   io.Reader
	key  string
	buf  []byte
	head []byte
	n    int64
	eof  bool
	err  error
}

func (c *chunkReader) reset(rc io.Reader, key string) {
	c.rc, c.key, c.head, c.n, c.eof, c.err = rc, key, c.head[:0], 0, false, nil
}

// next returns the next chunk of content, or nil once it has ended (eof) or
// failed (err). The chunk is valid until the following call.
func (c *chunkReader) next(ctx context.Context, progress interface{ Add(int64) }) []byte {
	for !c.eof && c.err == nil {
		if err := ctx.Err(); err != nil {
			c.err = err
			return nil
		}
		m, err := c.rc.Read(c.buf)
		c.n += int64(m)
		switch {
		case err == io.EOF:
			c.eof = true
		case err != nil:
			c.err = fmt.Errorf("read %s at byte %d: %w", c.key, c.n, err)
		}
		if m > 0 {
			if len(c.head) < mediatype.HeadLen {
				c.head = append(c.head, c.buf[:min(m, mediatype.HeadLen-len(c.head))]...)
			}
			if progress != nil {
				progress.Add(int64(m))
			}
			return c.buf[:m]
		}
	}
	return nil
}

// ended says the content is read to its end, or failed.
func (c *chunkReader) ended() bool { return c.eof || c.err != nil }

// check decides one blob.
func (h *hasher) check(ctx context.Context, e store.Entry) Result {
	b, done := h.begin(ctx, e)
	if done {
		return b.r
	}
	defer b.rc.Close()
	d, n, err := h.digest(ctx, b.rc, e.Key)
	return h.end(b, d, n, h.chunks.head, err)
}

// blobCheck is a blob whose content is to be hashed: its result so far, and
// its content opened.
type blobCheck struct {
	r    Result
	name blobname.Name // when content-addressed
	ca   bool
	rc   io.ReadCloser
}

// begin does what check does before hashing. When there is nothing to hash (a
// --fast or opaque-name check, or an error) it returns the final result and
// done; otherwise the caller hashes b.rc, closes it, and calls end.
func (h *hasher) begin(ctx context.Context, e store.Entry) (b blobCheck, done bool) {
	var f io.ReadCloser
	if h.kl != nil && e.Size < 0 {
		rc, desc, err := h.kl.OpenEntry(ctx, e.Key)
		if err != nil {
			return blobCheck{r: unreadable(Result{Key: e.Key, How: "sha256"}, err)}, true
		}
		f, e = rc, desc
	}
	defer func() {
		if done && f != nil {
			f.Close() // nothing to hash: the entry was opened only to be described
		}
	}()
	r := Result{Key: e.Key, Size: e.Size, mode: e.Mode}
	name, contentAddressed := blobname.Parse(e.Key)
	if contentAddressed {
		base := e.Key[strings.LastIndexByte(e.Key, '/')+1:]
		r.Expected = base[:blobname.DigestLen] // the name is the lower-case hex digest
	}
	_, isBucket := h.st.(store.Bucket)
	if isBucket && (h.fast || !contentAddressed) {
		// Only Stat carries the metadata a copy was stamped with.
		attrs, err := h.st.Stat(ctx, e.Key)
		if err != nil {
			return blobCheck{r: unreadable(r, err)}, true
		}
		stored := strings.ToLower(attrs.Metadata["sha256"])
		if !contentAddressed {
			r.Expected = stored
		}
		if h.fast {
			r.How = "metadata"
			switch {
			case stored == "":
				r.Category, r.Err = Unverifiable, "no sha256 metadata: only reading the content can check it"
			case attrs.Size != e.Size || (contentAddressed && stored != r.Expected):
				r.Category, r.Actual = Corrupt, stored
				r.Err = fmt.Sprintf("stored sha256 %s, size %d (listed %d)", stored, attrs.Size, e.Size)
			default:
				r.Category = OK
			}
			return blobCheck{r: r}, true
		}
	}
	if r.Expected == "" {
		// An opaque name with nothing to compare with: it exists, it has a size.
		r.How, r.Category = "exists", Unverifiable
		return blobCheck{r: r}, true
	}
	rc := f
	if f == nil {
		var err error
		if rc, err = h.st.Open(ctx, e.Key); err != nil {
			r.How = "sha256"
			return blobCheck{r: unreadable(r, err)}, true
		}
	}
	return blobCheck{r: r, name: name, ca: contentAddressed, rc: rc}, false
}

// end completes b's result from the digest of its content, n bytes long, whose
// first bytes are head.
func (h *hasher) end(b blobCheck, d blobname.Digest, n int64, head []byte, err error) Result {
	r := b.r
	r.How = "sha256"
	if err != nil {
		return unreadable(r, err)
	}
	r.Size, r.Category, r.Actual = n, OK, r.Expected
	switch {
	case b.ca && d == b.name.Digest:
	case !b.ca && d.String() == r.Expected:
	default:
		r.Category, r.Actual = Corrupt, d.String()
	}
	r.magic, r.magicDetail = magicMismatch(r.Key, n, head)
	return r
}

func unreadable(r Result, err error) Result {
	r.Category, r.Err = Unreadable, err.Error()
	return r
}

// hash reads key in full and returns its hex sha256 and length.
func (h *hasher) hash(ctx context.Context, key string) (string, int64, error) {
	rc, err := h.st.Open(ctx, key)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	return h.hashReader(ctx, rc, key)
}

func (h *hasher) hashReader(ctx context.Context, rc io.Reader, key string) (string, int64, error) {
	d, n, err := h.digest(ctx, rc, key)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(d[:]), n, nil
}

// digest hashes rc with the worker's reusable sha256 state and buffer.
func (h *hasher) digest(ctx context.Context, rc io.Reader, key string) (blobname.Digest, int64, error) {
	var d blobname.Digest
	if h.sum == nil {
		h.sum = sha256.New()
	}
	h.sum.Reset()
	c := &h.chunks
	c.reset(rc, key)
	for p := c.next(ctx, h.progress); p != nil; p = c.next(ctx, h.progress) {
		h.sum.Write(p)
	}
	if c.err != nil {
		return d, c.n, c.err
	}
	h.sum.Sum(d[:0])
	return d, c.n, nil
}

// permCensus finds the permissions most blobs have, and the blobs whose
// permissions grant more than that (forge writes 0600; a 0644 blob was put
// there by something else, and is readable by every user).
type permCensus struct {
	counts map[fs.FileMode]int64
	keys   map[fs.FileMode][]string
	max    int
}

func newPermCensus(max int) *permCensus {
	return &permCensus{counts: map[fs.FileMode]int64{}, keys: map[fs.FileMode][]string{}, max: max}
}

func (p *permCensus) add(key string, perm fs.FileMode) {
	p.counts[perm]++
	if len(p.keys[perm]) < p.max {
		p.keys[perm] = append(p.keys[perm], key)
	}
}

func (p *permCensus) merge(o *permCensus) {
	for perm, n := range o.counts {
		p.counts[perm] += n
	}
	for perm, keys := range o.keys {
		room := max(p.max-len(p.keys[perm]), 0)
		p.keys[perm] = append(p.keys[perm], keys[:min(room, len(keys))]...)
	}
}

func (p *permCensus) wide() []Anomaly {
	var usual fs.FileMode
	var most int64 = -1
	for perm, n := range p.counts {
		if n > most || n == most && perm < usual {
			usual, most = perm, n
		}
	}
	var out []Anomaly
	for perm, keys := range p.keys {
		if perm&^usual == 0 {
			continue
		}
		for _, k := range keys {
			out = append(out, Anomaly{k, WidePermissions, fmt.Sprintf("mode %04o grants more than the store's usual %04o", perm, usual)})
		}
	}
	return out
}

func magicMismatch(key string, size int64, head []byte) (AnomalyKind, string) {
	if len(head) == 0 || size == 0 {
		return "", ""
	}
	ext := path.Ext(key)
	claimed := mediatype.ForExt(ext)
	if claimed == "" {
		return "", ""
	}
	switch actual := mediatype.Sniff(head); actual {
	case claimed:
		return "", ""
	case "":
		return WrongExtension, fmt.Sprintf("named %s but the content does not start like one", ext)
	default:
		return WrongExtension, fmt.Sprintf("named %s but the content is %s", ext, strings.TrimPrefix(mediatype.Ext(actual), "."))
	}
}

// sessionIndex is the retention model's decision about the store's blobs
// (retain.Mark): which of them sessions keep.
type sessionIndex struct {
	r *retain.Retention
}

// readSessions lists the store and scans the sessions once, through the
// retention model that gc and migrate use: explicit references give the
// dangling ones, every string marks the blobs it names.
func readSessions(ctx context.Context, opts Options, rep *Report) (*sessionIndex, error) {
	res := opts.Resolver
	if res == nil {
		res = scan.NewResolver(opts.Store, opts.Bases)
	}
	r, err := retain.Mark(ctx, opts.Store, opts.Sessions, retain.MarkOptions{
		Jobs:      opts.Jobs,
		Stores:    []scan.Target{{Store: opts.Store, Resolver: res}},
		Companion: opts.Companion,
		Shard:     opts.Shard,
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if r.ListError != "" {
		rep.ListError = r.ListError
	}
	rep.Sessions = &SessionsReport{Scan: r.Scan}
	if !r.Complete {
		rep.Complete = false
	}
	return &sessionIndex{r: r}, nil
}

func (si *sessionIndex) referenced(key string) bool {
	id, ok := si.r.Lookup(key)
	return ok && si.r.KeptID(id)
}

// orphans counts the blobs the retention model does not keep by reference
// (young ones included: an orphan is not yet a gc candidate).
func (si *sessionIndex) orphans() (n, bytes int64) {
	for id := range si.r.Len() {
		if !si.r.KeptID(id) {
			n++
			bytes += si.r.Size(id)
		}
	}
	return n, bytes
}
