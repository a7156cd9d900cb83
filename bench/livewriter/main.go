// Command livewriter behaves like forge serving users, for bench/live.sh: it
// stores uploads in <root>/.forge/files/inbound under their content-addressed
// names and saves sessions naming them in <root>/.forge/sessions, while
// `mediactl gc --delete` and `mediactl gc purge` run beside it.
//
//	go run ./bench/livewriter -root R -duration 60s [-freshen]   # the writer
//	go run ./bench/livewriter -check R -duration 60s -log F      # the checker
//	go run ./bench/livewriter -check R -once                     # one check
//
// The writer reads the blobs already in inbound/ (the pool). Each of -workers
// users then loops: 70 % of the time it re-sends the bytes of a pool blob
// (read from its file; when the file is gone another is tried, then new bytes
// made), 30 % new random bytes with a PNG signature; it stores them, forge's
// way (a blob of the same sha256 present: the write is skipped) or with
// -freshen through pkg/persist (the blob is freshened, or written anew when
// gone); it waits a random turn of 0 to -turn-max; it saves a new session
// naming the blob, forge's way (<task>.json.tmp, fsync, rename); and with
// probability 20 % it deletes one of its own older sessions. On SIGINT or
// SIGTERM, or after -duration, each worker finishes its turn (saves its
// session) and stops. It prints a one-line summary on stderr; with -log, the
// sessions it saved, one a line, go to that file at exit.
//
// The checker polls every -interval: for every session file present, every
// blob it names must be in inbound/ (one in the trash is missing). It counts
// the polls that found a named blob missing and the outages (a session and a
// blob, missing from the first poll that saw it to the last), prints a
// summary on stderr and, with -log, every outage. With -once it checks once
// and prints "sessions N named-blobs N missing N" on stdout, then each
// missing blob with the session naming it and where it is in the trash.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mediactl/mediactl/pkg/persist"
)

const (
	reuseShare  = 0.7 // of the turns, re-sending the bytes of a pool blob
	deleteShare = 0.2 // of the turns, deleting one of the worker's older sessions
	pngMagic    = "\x89PNG\r\n\x1a\n"
)

func main() {
	root := flag.String("root", "", "forge work directory (the one holding .forge/) to write into")
	check := flag.String("check", "", "check this forge work directory instead of writing: every blob a session names must be in inbound/")
	duration := flag.Duration("duration", time.Minute, "how long to run (the writer finishes the turns under way)")
	workers := flag.Int("workers", 4, "concurrent users")
	freshen := flag.Bool("freshen", false, "store with persist.Put (freshen an existing blob) instead of skipping the write")
	seed := flag.Uint64("seed", 1, "random seed")
	logFile := flag.String("log", "", "writer: the sessions saved, at exit; checker: every outage")
	turnMax := flag.Duration("turn-max", 5*time.Second, "longest wait between storing a blob and saving the session naming it")
	interval := flag.Duration("interval", 50*time.Millisecond, "checker: time between polls")
	once := flag.Bool("once", false, "checker: check once and print the result")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *check != "" && *once:
		err = checkOnce(*check)
	case *check != "":
		ctx, cancel := context.WithTimeout(ctx, *duration)
		defer cancel()
		err = runChecker(ctx, *check, *interval, *logFile)
	case *root != "":
		ctx, cancel := context.WithTimeout(ctx, *duration)
		defer cancel()
		err = runWriter(ctx, writerOptions{root: *root, workers: *workers, freshen: *freshen, seed: *seed, turnMax: *turnMax, log: *logFile})
	default:
		err = errors.New("-root or -check is required")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "livewriter:", err)
		os.Exit(1)
	}
}

func inboundDir(root string) string  { return filepath.Join(root, ".forge", "files", "inbound") }
func sessionsDir(root string) string { return filepath.Join(root, ".forge", "sessions") }

// isBlobName reports whether name is "<64 hex>.png", the writer's blobs.
func isBlobName(name string) bool {
	hexPart, ok := strings.CutSuffix(name, ".png")
	if !ok || len(hexPart) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// ---------------------------------------------------------------- writer

type writerOptions struct {
	root    string
	workers int
	freshen bool
	seed    uint64
	turnMax time.Duration
	log     string
}

// saved is one session the writer saved.
type saved struct {
	stored, saved, deleted time.Time
	how                    string // skipped, written, freshened
	session, blob          string
}

type writer struct {
	writerOptions
	inbound, sessions string

	poolMu sync.Mutex
	pool   []string // blob names

	listMu sync.Mutex
	list   []*saved

	nSaved, nDeleted, nReused, nGone, nWritten, nSkipped, nFreshened, nErrors atomic.Int64
}

func runWriter(ctx context.Context, o writerOptions) error {
	if o.workers < 1 {
		return errors.New("-workers must be at least 1")
	}
	w := &writer{writerOptions: o, inbound: inboundDir(o.root), sessions: sessionsDir(o.root)}
	if err := os.MkdirAll(w.inbound, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(w.sessions, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(w.inbound)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && isBlobName(e.Name()) {
			w.pool = append(w.pool, e.Name())
		}
	}
	pool := len(w.pool)
	var wg sync.WaitGroup
	for i := range o.workers {
		wg.Go(func() { w.work(ctx, i) })
	}
	wg.Wait()

	if o.log != "" {
		if err := w.writeLog(); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "livewriter: %d sessions saved (%d deleted), blobs re-used %d (pool %d at start, %d picks found gone), written %d, skipped %d, freshened %d, errors %d\n",
		w.nSaved.Load(), w.nDeleted.Load(), w.nReused.Load(), pool, w.nGone.Load(), w.nWritten.Load(), w.nSkipped.Load(), w.nFreshened.Load(), w.nErrors.Load())
	if n := w.nErrors.Load(); n > 0 {
		return fmt.Errorf("%d errors", n)
	}
	return nil
}

func (w *writer) fail(format string, args ...any) {
	w.nErrors.Add(1)
	fmt.Fprintf(os.Stderr, "livewriter: "+format+"\n", args...)
}

func (w *writer) work(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(w.seed, uint64(id)+1))
	var own []*saved // this worker's sessions still present
	for n := 1; ctx.Err() == nil; n++ {
		data := w.pick(rng)
		stored := time.Now()
		path, how, err := w.store(data)
		if err != nil {
			w.fail("worker %d: store: %v", id, err)
			sleep(ctx, time.Second)
			continue
		}
		if w.turnMax > 0 {
			sleep(ctx, time.Duration(rng.Int64N(int64(w.turnMax)+1)))
		}
		task := fmt.Sprintf("live-%d-%d", id, n)
		sess := filepath.Join(w.sessions, task+".json")
		if err := saveSession(sess, task, path, stored); err != nil {
			w.fail("worker %d: save %s: %v", id, sess, err)
			continue
		}
		s := &saved{stored: stored, saved: time.Now(), how: how, session: sess, blob: path}
		w.nSaved.Add(1)
		w.listMu.Lock()
		w.list = append(w.list, s)
		w.listMu.Unlock()
		if len(own) > 0 && rng.Float64() < deleteShare {
			i := rng.IntN(len(own))
			old := own[i]
			if err := os.Remove(old.session); err != nil {
				w.fail("worker %d: delete %s: %v", id, old.session, err)
			} else {
				w.listMu.Lock()
				old.deleted = time.Now()
				w.listMu.Unlock()
				w.nDeleted.Add(1)
			}
			own = slices.Delete(own, i, i+1)
		}
		own = append(own, s)
	}
}

// pick returns the bytes of the next upload: a pool blob's (read from its
// file) or new ones.
func (w *writer) pick(rng *rand.Rand) []byte {
	if rng.Float64() < reuseShare {
		for range 5 {
			w.poolMu.Lock()
			var name string
			if len(w.pool) > 0 {
				name = w.pool[rng.IntN(len(w.pool))]
			}
			w.poolMu.Unlock()
			if name == "" {
				break
			}
			b, err := os.ReadFile(filepath.Join(w.inbound, name))
			if err == nil {
				w.nReused.Add(1)
				return b
			}
			if !errors.Is(err, fs.ErrNotExist) {
				w.fail("read %s: %v", name, err)
			}
			w.nGone.Add(1)
		}
	}
	b := make([]byte, 1024+rng.IntN(7*1024))
	copy(b, pngMagic)
	for i := len(pngMagic); i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// store saves data in inbound/ and says how: "skipped" (forge: a blob of
// these bytes is there), "written" or "freshened" (persist).
func (w *writer) store(data []byte) (path, how string, err error) {
	if w.freshen {
		b, err := persist.Put(w.inbound, bytes.NewReader(data), ".png", persist.Options{})
		if err != nil {
			return "", "", err
		}
		if b.Written {
			w.nWritten.Add(1)
			w.addPool(b.Name)
			return b.Path, "written", nil
		}
		w.nFreshened.Add(1)
		return b.Path, "freshened", nil
	}
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:]) + ".png"
	path = filepath.Join(w.inbound, name)
	if _, err := os.Lstat(path); err == nil {
		w.nSkipped.Add(1)
		return path, "skipped", nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	if err := writeAtomic(path, filepath.Join(w.inbound, ".tmp-"+name), data, 0o600); err != nil {
		return "", "", err
	}
	w.nWritten.Add(1)
	w.addPool(name)
	return path, "written", nil
}

func (w *writer) addPool(name string) {
	w.poolMu.Lock()
	w.pool = append(w.pool, name)
	w.poolMu.Unlock()
}

// writeAtomic writes data to tmp, syncs it and renames it onto path.
func writeAtomic(path, tmp string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// forge's session document, as far as the writer fills it.
type session struct {
	TaskID    string    `json:"task_id"`
	Messages  []message `json:"messages"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Parts   []part `json:"parts,omitempty"`
}

type part struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Media *media `json:"media,omitempty"`
}

type media struct {
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
}

// saveSession saves a new session naming blob, forge's way: pretty-printed
// JSON in <path>.tmp, synced, renamed onto path.
func saveSession(path, task, blob string, created time.Time) error {
	q := "What's in this image?"
	doc := session{
		TaskID: task,
		Messages: []message{
			{Role: "user", Content: q, Parts: []part{
				{Type: "text", Text: q},
				{Type: "image", Media: &media{MimeType: "image/png", URI: blob}},
			}},
		},
		CreatedAt: created.UTC(),
		UpdatedAt: time.Now().UTC(),
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, path+".tmp", append(b, '\n'), 0o600)
}

func (w *writer) writeLog() error {
	var buf bytes.Buffer
	buf.WriteString("# stored\tsaved\tdeleted\thow\tsession\tblob\n")
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Format("15:04:05.000000")
	}
	w.listMu.Lock()
	for _, s := range w.list {
		fmt.Fprintf(&buf, "%s\t%s\t%s\t%s\t%s\t%s\n", ts(s.stored), ts(s.saved), ts(s.deleted), s.how, s.session, s.blob)
	}
	w.listMu.Unlock()
	return os.WriteFile(w.log, buf.Bytes(), 0o644)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// ---------------------------------------------------------------- checker

type cached struct {
	mod  time.Time
	size int64
	uris []string
}

type checker struct {
	root, sessions string
	cache          map[string]cached
	parseErrors    int
}

// named lists, for every session file present, the blob paths it names.
func (c *checker) named() (map[string][]string, error) {
	ents, err := os.ReadDir(c.sessions)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(ents))
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(c.sessions, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue // deleted since the listing
		}
		seen[p] = true
		if ce, ok := c.cache[p]; ok && ce.mod.Equal(fi.ModTime()) && ce.size == fi.Size() {
			out[p] = ce.uris
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var doc session
		if err := json.Unmarshal(b, &doc); err != nil {
			c.parseErrors++
			continue
		}
		var uris []string
		for _, m := range doc.Messages {
			for _, pt := range m.Parts {
				if pt.Media != nil && pt.Media.URI != "" {
					uris = append(uris, pt.Media.URI)
				}
			}
		}
		c.cache[p] = cached{mod: fi.ModTime(), size: fi.Size(), uris: uris}
		out[p] = uris
	}
	for p := range c.cache {
		if !seen[p] {
			delete(c.cache, p)
		}
	}
	return out, nil
}

type pair struct{ session, blob string }

// missing returns the (session, blob) pairs whose blob is not in place while
// the session is still there, and the numbers of sessions and named blobs.
func (c *checker) missing() ([]pair, int, int, error) {
	named, err := c.named()
	if err != nil {
		return nil, 0, 0, err
	}
	blobs := map[string]bool{}
	var out []pair
	for s, uris := range named {
		for _, u := range uris {
			blobs[u] = true
			if _, err := os.Lstat(u); err == nil || !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			// The session may have been deleted since it was read: then
			// nothing names the blob any more.
			if _, err := os.Stat(s); err != nil {
				continue
			}
			out = append(out, pair{s, u})
		}
	}
	slices.SortFunc(out, func(a, b pair) int { return strings.Compare(a.session+a.blob, b.session+b.blob) })
	return out, len(named), len(blobs), nil
}

func newChecker(root string) *checker {
	return &checker{root: root, sessions: sessionsDir(root), cache: map[string]cached{}}
}

type outage struct {
	first, last time.Time
	polls       int
}

func runChecker(ctx context.Context, root string, interval time.Duration, logFile string) error {
	c := newChecker(root)
	var logw *os.File
	if logFile != "" {
		f, err := os.Create(logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logw = f
	}
	logf := func(format string, args ...any) {
		if logw != nil {
			fmt.Fprintf(logw, format, args...)
		}
	}
	open := map[pair]*outage{}
	var polls, instants, outages, lastMissing, back, deleted int
	var longest time.Duration
	// closeOutage ends an outage: the blob came back, or the session that
	// named it is gone while the blob is still missing (a loss that the
	// check at the end cannot see), or the check ended.
	closeOutage := func(p pair, o *outage, end string) {
		d := o.last.Sub(o.first)
		longest = max(longest, d)
		logf("outage\t%s\t%s\t%d polls\t%s\t%s\t%s\t%s\n", o.first.Format("15:04:05.000"), o.last.Format("15:04:05.000"), o.polls, d.Round(time.Millisecond), end, p.session, p.blob)
	}
	for ctx.Err() == nil {
		miss, _, _, err := c.missing()
		if err != nil {
			return err
		}
		now := time.Now()
		polls++
		lastMissing = len(miss)
		if len(miss) > 0 {
			instants++
		}
		now2 := map[pair]bool{}
		for _, p := range miss {
			now2[p] = true
			if o := open[p]; o != nil {
				o.last, o.polls = now, o.polls+1
			} else {
				open[p] = &outage{first: now, last: now, polls: 1}
				outages++
			}
		}
		for p, o := range open {
			if now2[p] {
				continue
			}
			end := "blob back"
			if _, err := os.Lstat(p.blob); err != nil {
				end = "session deleted, blob still missing"
				deleted++
			} else {
				back++
			}
			closeOutage(p, o, end)
			delete(open, p)
		}
		sleep(ctx, interval)
	}
	for p, o := range open {
		closeOutage(p, o, "still missing at the end")
	}
	fmt.Fprintf(os.Stderr, "checker: %d polls, %d instants with a named blob missing, %d outages (session, blob): %d ended with the blob back, %d by the session's deletion with the blob still missing, %d still missing at the last poll; longest %s; unparsable session reads %d\n",
		polls, instants, outages, back, deleted, lastMissing, longest.Round(time.Millisecond), c.parseErrors)
	return nil
}

func checkOnce(root string) error {
	c := newChecker(root)
	miss, sessions, blobs, err := c.missing()
	if err != nil {
		return err
	}
	fmt.Printf("sessions %d named-blobs %d missing %d\n", sessions, blobs, len(miss))
	for _, p := range miss {
		where := "not in the trash"
		if m, _ := filepath.Glob(filepath.Join(inboundDir(root), ".mediactl", "trash", "*", filepath.Base(p.blob))); len(m) > 0 {
			where = "in the trash: " + strings.Join(m, " ")
		}
		fmt.Printf("missing %s named by %s (%s)\n", p.blob, p.session, where)
	}
	return nil
}
