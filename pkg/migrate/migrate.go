// Package migrate moves blobs from a store on one host's disk to a bucket that
// every pod can read, proves each copy, rewrites the session references to
// point at the copies, and can undo the rewrites.
//
// A migration has three phases; each is safe to interrupt and to run again.
//
//  1. The copy uploads every selected blob with its Content-Type and its sha256
//     in the object's metadata. The digest is computed while the bytes stream
//     out: a content-addressed blob whose bytes do not match its name is not
//     uploaded. After each upload the object's attributes are read back — size
//     and sha256 metadata must match, and the MD5 too when the backend reports
//     one — and only then is the copy journaled as proven.
//  2. The rewrite replaces, in every session source, each reference to a proven
//     copy with the copy's URL, journaling every replacement before it is
//     written, so that [Rollback] restores the original bytes exactly.
//  3. Deleting the sources ([Run] with DeleteSource, through package trash)
//     is allowed only for blobs whose copy is proven and still in place,
//     that the retention rule lets go and that no session still points at;
//     before it, every reference to a copy is read back as the runtime will
//     ([ReadBack]).
//
// The [Journal] ties the phases together: a rerun skips copies it proves and
// rollback reads the rewrites from it. An object that already exists in the
// destination with the same size and sha256 is skipped; one with other content
// is a conflict and is never overwritten unless asked.
package migrate

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/usage"
)

// MetadataKey is the object metadata entry that holds a copy's sha256 (lower-case
// hex). verify --fast and verify of opaque names read it.
const MetadataKey = "sha256"

// DefaultJobs is the number of uploads in flight when Options.Jobs is 0. Uploads
// wait on the network far more than on the CPU, so it is above the core count.
const DefaultJobs = 8

// Progress is told about bytes read from the source.
type Progress interface{ Add(n int64) }

// Selection picks the blobs to migrate. The zero value selects every blob.
type Selection struct {
	// Include holds glob patterns (path.Match syntax); a blob is selected when
	// its key or its base name matches one. Empty selects all.
	Include []string
	// MinAge selects only blobs last modified at least this long ago (0: no
	// limit). A younger blob may belong to a session that is not saved yet:
	// it is reported as skipped, for a later run.
	MinAge time.Duration
	// Shard, when sharded, selects only that shard's blobs (package shard):
	// the N shards of a split together copy every blob once.
	Shard shard.Spec
}

// Options configure the copy, the first step of Run.
type Options struct {
	From store.Store // where the blobs are
	To   store.Store // a bucket store (store.Bucket) they are copied to

	Select Selection
	// Now is the reference time of Select.MinAge; zero means time.Now().
	Now time.Time

	Jobs int // uploads at once; 0 means DefaultJobs
	// BandwidthLimit caps the bytes per second read for upload across all
	// jobs; 0 means no limit.
	BandwidthLimit int64
	// PartSize is the multipart part size in bytes (0: the driver's default).
	PartSize int
	// PartConcurrency is how many parts of one large blob are uploaded at
	// once; 0 keeps about 16 parts in flight over all jobs (at least 2 per
	// blob). Each part in flight holds a buffer of PartSize bytes.
	PartConcurrency int

	// Overwrite replaces objects that exist with other content (conflicts)
	// instead of reporting them.
	Overwrite bool
	// VerifyDownload reads every copy this run acts on back and hashes it:
	// the ones it uploads, those an earlier run proved and those already
	// there.
	VerifyDownload bool
	// DryRun changes nothing: it classifies every blob as to copy, already
	// there, conflicting or corrupt (for existing objects, by their metadata).
	DryRun bool

	// Journal records each proven copy; proven copies it already lists are
	// skipped. Required unless DryRun.
	Journal *Journal

	Progress Progress
	// MaxListed caps each problem list of the report (counts stay exact);
	// 0 means 10,000.
	MaxListed int
}

// Problem is one blob that was not copied, or not proven.
type Problem struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
	// Expected and Actual are sha256 digests, for corrupt blobs and conflicts.
	Expected string `json:"expected_sha256,omitempty"`
	Actual   string `json:"actual_sha256,omitempty"`
}

// Report says what the copy did (or, in a dry run, would do).
type Report struct {
	From   string `json:"from"`
	To     string `json:"to"`
	DryRun bool   `json:"dry_run"`

	Selected      int64 `json:"selected"` // blobs the selection picked
	SelectedBytes int64 `json:"selected_bytes"`
	// Copied were uploaded and proven in this run (in a dry run: would be uploaded).
	Copied      int64 `json:"copied"`
	CopiedBytes int64 `json:"copied_bytes"`
	// Existing were already in the destination with the same size and sha256.
	Existing      int64 `json:"existing"`
	ExistingBytes int64 `json:"existing_bytes"`
	// Resumed were proven by an earlier run, according to the journal.
	Resumed      int64 `json:"resumed"`
	ResumedBytes int64 `json:"resumed_bytes"`

	Conflicts int64 `json:"conflicts"` // the destination holds other content under the key
	Corrupt   int64 `json:"corrupt"`   // content-addressed blobs whose bytes do not match their name
	Failed    int64 `json:"failed"`    // I/O errors, unproven copies: the run is incomplete
	Skipped   int64 `json:"skipped"`   // symlinks, non-regular and temporary files (never migrated), blobs younger than Select.MinAge (left for a later run)

	ConflictList []Problem `json:"conflict_list"`
	CorruptList  []Problem `json:"corrupt_list"`
	FailedList   []Problem `json:"failed_list"`
	SkippedList  []Problem `json:"skipped_list"`

	Seconds float64 `json:"seconds"`
	// BytesRead counts source bytes read (uploads and hashing).
	BytesRead int64 `json:"bytes_read"`
	// Interrupted is set when the context ended before every blob was handled.
	Interrupted bool `json:"interrupted"`
	// Unfinished counts the uploads the interrupt stopped midway: not
	// failures, nothing of them is journaled, and a rerun copies them.
	Unfinished int64 `json:"unfinished"`
}

// Complete reports whether every selected blob was handled: copied, found in
// place, or classified as a conflict or corrupt. Only then may the sources of
// the proven copies be deleted without a second look.
func (r *Report) Complete() bool { return !r.Interrupted && r.Failed == 0 }

// Proven is how many of the blobs this run selected the journal (after the copy)
// holds a proven copy of: those copied, found in place or proven earlier.
func (r *Report) Proven() int64 { return r.Copied + r.Existing + r.Resumed }

// defaultPartSize is the S3 transfer manager's part size when PartSize is 0.
const defaultPartSize = 8 << 20

// defaultMaxListed caps each problem list when the caller gives no cap.
const defaultMaxListed = 10000

// withDefaults fills in the options whose zero value means a default.
// copyBlobs and BufferBytes both start from it, so that the buffers estimated
// are those the copy allocates.
func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.PartConcurrency <= 0 {
		o.PartConcurrency = max(2, 16/o.Jobs)
	}
	if o.MaxListed <= 0 {
		o.MaxListed = defaultMaxListed
	}
	return o
}

// BufferBytes estimates the upload buffers the copy holds at once with opts: for
// each job uploading a large blob, a part being read and the parts in flight.
// The command uses it as the collector's soft memory limit.
func BufferBytes(opts Options) int64 {
	opts = opts.withDefaults()
	part := int64(opts.PartSize)
	if part <= 0 {
		part = defaultPartSize
	}
	return int64(opts.Jobs) * int64(opts.PartConcurrency+1) * part
}

var errDigestMismatch = errors.New("sha256 of the bytes read differs")

// copyBlobs uploads the selected blobs of opts.From to opts.To and proves each copy.
// It returns an error only when it could not run at all (bad options, the
// listing failed); problems with single blobs are in the report.
func copyBlobs(ctx context.Context, opts Options) (*Report, error) {
	to, ok := opts.To.(store.Bucket)
	if !ok {
		return nil, fmt.Errorf("migrate: the destination %s is not a bucket", opts.To.Location())
	}
	if opts.Journal == nil && !opts.DryRun {
		return nil, errors.New("migrate: a journal is required")
	}
	if err := opts.Select.Check(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	m := &migration{
		opts:    opts,
		to:      to,
		rep:     &Report{From: opts.From.Location(), To: opts.To.Location(), DryRun: opts.DryRun},
		limiter: newLimiter(opts.BandwidthLimit),
		cutoff:  opts.cutoff(),
		quiet:   opts.quietCutoff(),
	}
	if err := preflight(ctx, opts.To); err != nil {
		return nil, err
	}
	start := time.Now()
	work := make(chan job, opts.Jobs*4)
	var wg sync.WaitGroup
	for range opts.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if ctx.Err() != nil {
					continue
				}
				m.one(ctx, j)
			}
		}()
	}
	listErr := m.produce(ctx, work)
	close(work)
	wg.Wait()
	m.rep.Seconds = time.Since(start).Seconds()
	m.rep.BytesRead = m.bytesRead.Load()
	if ctx.Err() != nil {
		m.rep.Interrupted = true
	}
	if opts.Journal != nil {
		opts.Journal.keepConfirmed()
		if err := opts.Journal.Sync(); err != nil {
			return m.rep, err
		}
	}
	sortProblems(m.rep)
	if listErr != nil && ctx.Err() == nil {
		return m.rep, listErr
	}
	return m.rep, nil
}

var errEnough = errors.New("enough")

// preflight reads the first entry of the destination, so that a bucket that
// does not exist or credentials that do not work stop the run with one clear
// error instead of one failure per blob.
func preflight(ctx context.Context, to store.Store) error {
	err := to.List(ctx, "", func(store.Entry) error { return errEnough })
	switch {
	case err == nil || errors.Is(err, errEnough):
		return nil
	case errors.Is(err, store.ErrNotExist):
		return fmt.Errorf("migrate: the destination %s does not exist: create the bucket first (migrate never creates one): %w: %w", to.Location(), usage.Err, err)
	}
	return fmt.Errorf("migrate: the destination %s cannot be listed: %w", to.Location(), err)
}

type job struct {
	e       store.Entry
	exists  bool // the listing of the destination holds the key
	dstSize int64
}

type migration struct {
	opts    Options
	to      store.Bucket
	rep     *Report
	limiter *limiter
	cutoff  time.Time
	quiet   time.Time // see quietCutoff

	mu        sync.Mutex
	bytesRead atomic.Int64
}

// produce lists the source and the destination side by side (both listings are
// in key order) and hands each selected blob to the workers, marked with
// whether the destination already has its key: one listing request per
// thousand objects instead of one request per blob.
func (m *migration) produce(ctx context.Context, work chan<- job) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dst := make(chan store.Entry, 4096)
	var dstErr error
	go func() {
		defer close(dst)
		dstErr = m.to.List(lctx, "", func(e store.Entry) error {
			select {
			case dst <- e:
				return nil
			case <-lctx.Done():
				return lctx.Err()
			}
		})
	}()
	cur, more := <-dst
	// Selected by key as the source is listed: a shard's listing of a local
	// folder then holds the names of its own blobs only while it sorts them.
	err := store.ListSelected(ctx, m.opts.From, "", m.opts.Select.keeps, func(e store.Entry) error {
		if why := skipReason(e, m.cutoff, m.quiet); why != "" {
			m.problem(&m.rep.Skipped, &m.rep.SkippedList, Problem{Key: e.Key, Reason: why})
			if e.Regular() && m.opts.Journal != nil {
				m.opts.Journal.leftAlone(e.Key)
			}
			return nil
		}
		for more && cur.Key < e.Key {
			cur, more = <-dst
		}
		j := job{e: e}
		if more && cur.Key == e.Key {
			j.exists, j.dstSize = true, cur.Size
		}
		m.mu.Lock()
		m.rep.Selected++
		m.rep.SelectedBytes += e.Size
		m.mu.Unlock()
		select {
		case work <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	cancel()
	for range dst { // let the destination listing end
	}
	if err != nil {
		return fmt.Errorf("migrate: list %s: %w", m.opts.From.Location(), err)
	}
	if dstErr != nil && !errors.Is(dstErr, context.Canceled) {
		// Without the listing every key is still checked by a conditional
		// write, so this only costs requests; but say so.
		return fmt.Errorf("migrate: list %s: %w", m.opts.To.Location(), dstErr)
	}
	return nil
}

// TemporaryQuiet is how long a file whose name looks temporary ("x.tmp",
// "x.part", see blobname.IsTemporary) must have been left alone before it is
// copied. A writer's file in progress changes within it; one that has not is
// either a leftover (copied harmlessly, and never deleted as a source: gc's
// retention does not list it) or media whose user-given name merely ends
// that way — coffer keeps "<uuid>.tmp" for a user's "notes.tmp", and a
// session names it.
const TemporaryQuiet = time.Hour

// skipReason says why a selected entry is not migrated (never, or not before
// cutoff, its last modification time; a temporary-looking name not before
// quiet), or "" for a blob to copy.
func skipReason(e store.Entry, cutoff, quiet time.Time) string {
	switch {
	case !e.Regular() && e.Link != "":
		return "a symbolic link to " + e.Link + " (never followed)"
	case !e.Regular():
		return "not a regular file"
	case blobname.IsTemporary(e.Key) && !e.ModTime.Before(quiet):
		return "a temporary file that may be being written (modified within the last " + TemporaryQuiet.String() + "): a later run migrates it if it is left as it is"
	case !cutoff.IsZero() && !e.ModTime.Before(cutoff): // young, as gc and the trash judge it
		return "modified " + e.ModTime.UTC().Format(time.RFC3339) + ", within the minimum age: a later run migrates it"
	}
	return ""
}

// selectedBytes lists opts.From and totals the sizes of the blobs copyBlobs
// would select and try to copy, for a progress bar: copyBlobs hands blobs to
// the uploads while it lists, so it learns the total only at the end.
func selectedBytes(ctx context.Context, opts Options) (int64, error) {
	if err := opts.Select.Check(); err != nil {
		return 0, err
	}
	cutoff, quiet := opts.cutoff(), opts.quietCutoff()
	var total int64
	add := func(e store.Entry) error {
		if skipReason(e, cutoff, quiet) == "" {
			total += e.Size
		}
		return nil
	}
	// A total needs no order: where the store lists without sorting, no
	// folder's names are held for it.
	var err error
	if ul, ok := store.AsUnorderedLister(opts.From); ok {
		err = ul.ListUnordered(ctx, "", func(e store.Entry) error {
			if !opts.Select.keeps(e.Key) {
				return nil
			}
			return add(e)
		})
	} else {
		err = store.ListSelected(ctx, opts.From, "", opts.Select.keeps, add)
	}
	if err != nil {
		return total, fmt.Errorf("migrate: list %s: %w", opts.From.Location(), err)
	}
	return total, nil
}

// cutoff is the modification time a selected blob must be older than (zero
// for no limit).
func (o Options) cutoff() time.Time {
	if o.Select.MinAge <= 0 {
		return time.Time{}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return now.Add(-o.Select.MinAge)
}

// quietCutoff is the modification time a temporary-looking name must be
// older than to be copied (TemporaryQuiet before Now).
func (o Options) quietCutoff() time.Time {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return now.Add(-TemporaryQuiet)
}

// PatternError is a malformed Selection.Include pattern.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("migrate: include pattern %q: %v", e.Pattern, e.Err)
}
func (e *PatternError) Unwrap() error { return e.Err }

// Check rejects malformed patterns, which match would take as matching nothing.
func (s Selection) Check() error {
	for _, p := range s.Include {
		if _, err := path.Match(p, ""); err != nil {
			return &PatternError{Pattern: p, Err: err}
		}
	}
	return nil
}

// keeps reports whether the blob key is selected. It decides by the key
// alone (the shard, the patterns), so that a listing can ask it before it
// holds the name.
func (s Selection) keeps(key string) bool {
	if !s.Shard.Owns(key) {
		return false
	}
	if len(s.Include) == 0 {
		return true
	}
	base := path.Base(key)
	for _, p := range s.Include {
		if ok, _ := path.Match(p, key); ok {
			return true
		}
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return false
}

func (m *migration) problem(count *int64, list *[]Problem, p Problem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*count++
	if len(*list) < m.opts.MaxListed {
		*list = append(*list, p)
	}
}

func (m *migration) count(n, b *int64, size int64) {
	m.mu.Lock()
	*n++
	*b += size
	m.mu.Unlock()
}

// one handles one blob.
func (m *migration) one(ctx context.Context, j job) {
	e := j.e
	if m.opts.Journal != nil {
		// A proof holds while the source is as it was copied and the
		// destination's listing still has the copy at its size (a bucket
		// emptied since, or a proof taken over from a shard's journal, must
		// not leave the rewrite pointing at nothing). Otherwise the key is
		// proven again below, or not at all.
		holds := func(p Proof) bool {
			return p.Size == e.Size && p.ModTime == e.ModTime.UnixNano() && j.exists && j.dstSize == p.Size
		}
		if m.opts.VerifyDownload && !m.opts.DryRun {
			// Read every copy back: an earlier run's proof too, since the
			// copy's bytes may have changed since (a service's fault,
			// another writer) while its listing and metadata did not.
			if p, ok := m.opts.Journal.Proven(e.Key); ok && holds(p) {
				if m.copyStillHashes(ctx, e, p.Digest()) {
					m.opts.Journal.confirmIf(e.Key, nil)
					m.count(&m.rep.Resumed, &m.rep.ResumedBytes, e.Size)
				}
				return
			}
		} else if m.opts.Journal.confirmIf(e.Key, holds) {
			m.count(&m.rep.Resumed, &m.rep.ResumedBytes, e.Size)
			return
		}
	}
	name, ca := blobname.Parse(e.Key)
	want := ""
	if ca {
		want = name.Digest.String()
	}
	if j.exists {
		m.existing(ctx, e, want)
		return
	}
	if m.opts.DryRun {
		m.count(&m.rep.Copied, &m.rep.CopiedBytes, e.Size)
		return
	}
	m.upload(ctx, e, want)
}

// existing decides what to do about a key the destination already holds.
func (m *migration) existing(ctx context.Context, e store.Entry, want string) {
	attrs, err := statRetry(ctx, m.to, e.Key)
	if errors.Is(err, store.ErrNotExist) {
		// Deleted since it was listed.
		if m.opts.DryRun {
			m.count(&m.rep.Copied, &m.rep.CopiedBytes, e.Size)
			return
		}
		m.upload(ctx, e, want)
		return
	}
	if err != nil {
		m.fail(e.Key, err)
		return
	}
	if want == "" {
		// An opaque name: only hashing the source tells what it should hold.
		if want, err = m.hashSource(ctx, e); err != nil {
			m.fail(e.Key, err)
			return
		}
	}
	have := attrs.Metadata[MetadataKey]
	if attrs.Size == e.Size && have == want {
		if m.opts.VerifyDownload && !m.opts.DryRun && !m.copyStillHashes(ctx, e, want) {
			return
		}
		m.count(&m.rep.Existing, &m.rep.ExistingBytes, e.Size)
		if !m.opts.DryRun {
			m.journalCopied(e, want, true)
		}
		return
	}
	if m.opts.Overwrite {
		if m.opts.DryRun {
			m.count(&m.rep.Copied, &m.rep.CopiedBytes, e.Size)
			return
		}
		m.upload(ctx, e, want)
		return
	}
	reason := fmt.Sprintf("the destination holds other content under this key (%d bytes, here %d)", attrs.Size, e.Size)
	if have == "" {
		reason = fmt.Sprintf("the destination holds an object without sha256 metadata under this key (%d bytes, here %d), written by another tool", attrs.Size, e.Size)
	}
	m.problem(&m.rep.Conflicts, &m.rep.ConflictList, Problem{Key: e.Key, Reason: reason, Expected: want, Actual: have})
}

// copyStillHashes downloads the destination's copy of e and reports whether
// its bytes hash to want, the sha256 an earlier run proved or the metadata
// says: with VerifyDownload, no copy is taken as proven on its listing and
// metadata alone. A copy that does not is a conflict, left in place, and its
// source is neither rewritten to it nor deleted.
func (m *migration) copyStillHashes(ctx context.Context, e store.Entry, want string) bool {
	var got string
	err := store.RetryThrottled(ctx, func() (err error) {
		got, _, err = hashObject(ctx, m.to, e.Key)
		return err
	})
	switch {
	case err != nil:
		m.fail(e.Key, fmt.Errorf("download the copy: %w", err))
		return false
	case got != want:
		m.problem(&m.rep.Conflicts, &m.rep.ConflictList, Problem{Key: e.Key, Expected: want, Actual: got,
			Reason: "the copy in the destination has other bytes than its sha256 says (" + want + "): left in place; the source is kept, and its references are not rewritten to it"})
		return false
	}
	return true
}

func (m *migration) fail(key string, err error) {
	if errors.Is(err, context.Canceled) {
		m.mu.Lock()
		m.rep.Unfinished++
		m.mu.Unlock()
		return
	}
	m.problem(&m.rep.Failed, &m.rep.FailedList, Problem{Key: key, Reason: err.Error()})
}

// hashSource reads a blob once to learn its digest: an opaque name says nothing
// about the content, and the digest must be in the metadata before the upload
// starts.
func (m *migration) hashSource(ctx context.Context, e store.Entry) (string, error) {
	sum, n, err := hashObject(ctx, m.opts.From, e.Key)
	m.bytesRead.Add(n)
	return sum, err
}

// hashObject reads key and returns its sha256 in lower-case hex and the number
// of bytes read (also on an error).
func hashObject(ctx context.Context, st store.Store, key string) (string, int64, error) {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, rc})
	if err != nil {
		return "", n, fmt.Errorf("read %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// statRetry is Stat, tried again while the service says to slow down.
func statRetry(ctx context.Context, st store.Store, key string) (attrs store.Entry, err error) {
	err = store.RetryThrottled(ctx, func() error {
		attrs, err = st.Stat(ctx, key)
		return err
	})
	return attrs, err
}

// upload copies one blob and proves the copy. want is the sha256 the bytes
// must have: the name's for a content-addressed blob; for an opaque one, the
// digest existing hashed already, or "" to hash the source here.
func (m *migration) upload(ctx context.Context, e store.Entry, want string) {
	// Whether the name is content-addressed decides what a mismatch means,
	// not whether want is set: for an opaque name it only says the bytes
	// changed since they were hashed.
	_, ca := blobname.Parse(e.Key)
	if want == "" {
		var err error
		if want, err = m.hashSource(ctx, e); err != nil {
			m.fail(e.Key, err)
			return
		}
	}
	var src *hashingReader
	attempt := func() error {
		rc, err := m.opts.From.Open(ctx, e.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		src = &hashingReader{ctx: ctx, r: ctxReader{ctx, rc}, sha: sha256.New(), want: want, lim: m.limiter, progress: m.opts.Progress, read: &m.bytesRead}
		if md, ok := store.AsMD5Reporter(m.to); !ok || md.ReportsMD5(e.Size) {
			// Only where the destination will report an MD5 to compare with:
			// a second hash over every byte takes CPU from the uploads.
			src.md5 = md5.New()
		}
		head, err := src.peek(512)
		if err != nil {
			return err
		}
		return m.to.Put(ctx, e.Key, src, store.PutOptions{
			ContentType:     contentType(e.Key, head),
			Metadata:        map[string]string{MetadataKey: want},
			IfNotExist:      !m.opts.Overwrite,
			PartSize:        m.opts.PartSize,
			PartConcurrency: m.opts.PartConcurrency,
			CallerVerifies:  src.md5 != nil, // prove compares the MD5
			SHA256:          want,
			Size:            e.Size,
		})
	}
	err := store.RetryThrottled(ctx, attempt)
	switch {
	case errors.Is(err, errDigestMismatch):
		if ca {
			m.problem(&m.rep.Corrupt, &m.rep.CorruptList, Problem{Key: e.Key, Reason: "sha256 of the bytes differs from the name: not uploaded (see mediactl verify)", Expected: want, Actual: src.digest()})
		} else {
			m.fail(e.Key, errors.New("changed while it was being copied: not uploaded; run again"))
		}
		return
	case errors.Is(err, store.ErrExist):
		// Written by someone else since the listing: judge it like any object found there.
		m.existing(ctx, e, want)
		return
	case err != nil:
		m.fail(e.Key, err)
		return
	}
	if err := m.prove(ctx, e, want, src); err != nil {
		m.fail(e.Key, fmt.Errorf("copy not proven: %w", err))
		return
	}
	m.count(&m.rep.Copied, &m.rep.CopiedBytes, e.Size)
	m.journalCopied(e, want, false)
}

// prove reads the copy's attributes back (and with VerifyDownload its bytes).
func (m *migration) prove(ctx context.Context, e store.Entry, want string, src *hashingReader) error {
	if src.n != e.Size {
		return fmt.Errorf("read %d bytes but the blob had %d when listed: it changed; run again", src.n, e.Size)
	}
	attrs, err := statRetry(ctx, m.to, e.Key)
	if err != nil {
		return err
	}
	if attrs.Size != src.n {
		return fmt.Errorf("the object has %d bytes, %d were sent", attrs.Size, src.n)
	}
	if got := attrs.Metadata[MetadataKey]; got != want {
		return fmt.Errorf("the object's sha256 metadata is %q, want %s", got, want)
	}
	if attrs.MD5 != nil && src.md5 != nil && !slices.Equal(attrs.MD5, src.md5.Sum(nil)) {
		return fmt.Errorf("the object's MD5 %x differs from the bytes sent (%x)", attrs.MD5, src.md5.Sum(nil))
	}
	if m.opts.VerifyDownload {
		var got string
		err := store.RetryThrottled(ctx, func() (err error) {
			got, _, err = hashObject(ctx, m.to, e.Key)
			return err
		})
		if err != nil {
			return fmt.Errorf("download: %w", err)
		}
		if got != want {
			return fmt.Errorf("downloaded bytes hash to %s, want %s", got, want)
		}
	}
	return nil
}

// journalCopied records e's copy as proven; found says it was in the
// destination already (not uploaded by this migration).
func (m *migration) journalCopied(e store.Entry, sum string, found bool) {
	err := m.opts.Journal.append(Record{T: RecordCopied, Key: e.Key, Size: e.Size, ModTime: e.ModTime, SHA256: sum, URL: objectURL(m.to, e.Key), Mode: uint32(e.Mode.Perm()), Found: found})
	if err != nil {
		m.fail(e.Key, err)
		return
	}
	m.opts.Journal.confirmIf(e.Key, nil)
}

// objectURL is the URL of key in a bucket store: scheme://bucket/prefix/key.
func objectURL(b store.Bucket, key string) string {
	return b.Scheme() + "://" + b.Name() + "/" + b.Prefix() + key
}

// hashingReader hashes what it passes on and, at the end, refuses to report
// EOF when the digest is not the expected one: the upload is then aborted
// instead of completed.
type hashingReader struct {
	ctx      context.Context // ends a wait for the rate limit
	r        io.Reader
	head     []byte
	sha      hash.Hash
	md5      hash.Hash // nil when the destination reports no MD5 to compare
	want     string
	n        int64
	lim      *limiter
	progress Progress
	read     *atomic.Int64
}

// peek reads up to n bytes ahead, for content sniffing; they are passed on first.
func (h *hashingReader) peek(n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(h.r, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	h.head = buf[:k]
	return h.head, nil
}

func (h *hashingReader) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(h.head) > 0 {
		n = copy(p, h.head)
		h.head = h.head[n:]
	} else {
		n, err = h.r.Read(p)
	}
	if n > 0 {
		h.sha.Write(p[:n])
		if h.md5 != nil {
			h.md5.Write(p[:n])
		}
		h.n += int64(n)
		h.read.Add(int64(n))
		if h.progress != nil {
			h.progress.Add(int64(n))
		}
		if werr := h.lim.wait(h.ctx, n); werr != nil {
			return n, werr
		}
	}
	if err == io.EOF && h.digest() != h.want {
		return n, errDigestMismatch
	}
	return n, err
}

func (h *hashingReader) digest() string { return hex.EncodeToString(h.sha.Sum(nil)) }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func sortProblems(r *Report) {
	for _, l := range [][]Problem{r.ConflictList, r.CorruptList, r.FailedList, r.SkippedList} {
		slices.SortFunc(l, func(a, b Problem) int {
			if a.Key < b.Key {
				return -1
			}
			if a.Key > b.Key {
				return 1
			}
			return 0
		})
	}
	for _, l := range []*[]Problem{&r.ConflictList, &r.CorruptList, &r.FailedList, &r.SkippedList} {
		if *l == nil {
			*l = []Problem{}
		}
	}
}
