package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/verify"
)

func name(content []byte, ext string) string {
	d := sha256.Sum256(content)
	return hex.EncodeToString(d[:]) + ext
}

// kind is a store under test: where blobs are written and how the test can
// corrupt one behind the store's back.
type kind struct {
	name string
	open func(t *testing.T) store.Store
}

func kinds(t *testing.T) []kind {
	srv := storetest.StartS3(t, nil)
	n := 0
	return []kind{
		{"local", func(t *testing.T) store.Store {
			st, err := store.Open(context.Background(), t.TempDir())
			must(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"s3", func(t *testing.T) store.Store {
			n++
			st, err := store.Open(context.Background(), srv.Bucket(t, fmt.Sprintf("verify-%d", n)))
			must(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, st store.Store, key string, content []byte) {
	t.Helper()
	must(t, st.Put(context.Background(), key, bytes.NewReader(content), store.PutOptions{}))
}

func run(t *testing.T, opts verify.Options) *verify.Report {
	t.Helper()
	rep, err := verify.Run(context.Background(), opts)
	must(t, err)
	return rep
}

func keysOf(rs []verify.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Key)
	}
	sort.Strings(out)
	return out
}

// corruptStore writes n blobs and corrupts some in each way a disk or a bad
// copy does; it returns the keys that are corrupt.
func corruptStore(t *testing.T, st store.Store, n int) []string {
	rng := rand.New(rand.NewPCG(7, 8))
	var keys []string
	var contents [][]byte
	for i := range n {
		c := make([]byte, 1+rng.IntN(300_000))
		for j := range c {
			c[j] = byte(rng.Uint32())
		}
		k := name(c, ".bin")
		if i%5 == 0 {
			k = "sub/" + k // nested keys are blobs too
		}
		keys, contents = append(keys, k), append(contents, c)
	}
	var corrupt []string
	for i, k := range keys {
		c := contents[i]
		switch i % 10 {
		case 1: // one bit flipped
			c = bytes.Clone(c)
			c[len(c)/2] ^= 0x10
		case 3: // truncated
			c = c[:len(c)/2]
		case 5: // appended to
			c = append(bytes.Clone(c), "tail"...)
		case 7: // another blob's bytes under this name
			c = contents[(i+1)%len(contents)]
		}
		put(t, st, k, c)
		if i%10 == 1 || i%10 == 3 || i%10 == 5 || i%10 == 7 {
			corrupt = append(corrupt, k)
		}
	}
	sort.Strings(corrupt)
	return corrupt
}

// TestOracleSha256sum: on a local store, the set verify calls corrupt is exactly
// the set coreutils' sha256sum finds.
func TestOracleSha256sum(t *testing.T) { eachHasher(t, testOracleSha256sum) }

func testOracleSha256sum(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum not installed")
	}
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	must(t, err)
	defer st.Close()
	injected := corruptStore(t, st, 60)

	var oracle []string
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() || strings.Contains(p, "/.mediactl/") {
			return err
		}
		out, err := exec.Command("sha256sum", p).Output()
		if err != nil {
			return err
		}
		if strings.Fields(string(out))[0]+".bin" != filepath.Base(p) {
			rel, _ := filepath.Rel(dir, p)
			oracle = append(oracle, filepath.ToSlash(rel))
		}
		return nil
	})
	must(t, err)
	sort.Strings(oracle)
	if fmt.Sprint(oracle) != fmt.Sprint(injected) {
		t.Fatalf("the fixture is off: sha256sum finds %v, injected %v", oracle, injected)
	}
	rep := run(t, verify.Options{Store: st, Jobs: 3})
	if got := keysOf(rep.Corrupt); fmt.Sprint(got) != fmt.Sprint(oracle) {
		t.Fatalf("verify corrupt = %v\nsha256sum     = %v", got, oracle)
	}
	if rep.Counts[verify.OK] != 60-int64(len(oracle)) || !rep.Complete || rep.Blobs != 60 || rep.Fraction != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range rep.Corrupt {
		if c.Expected == c.Actual || len(c.Actual) != 64 || !strings.HasPrefix(filepath.Base(c.Key), c.Expected) {
			t.Errorf("corrupt %s: expected %s actual %s", c.Key, c.Expected, c.Actual)
		}
	}
}

// TestEveryStoreKind runs corruption, subsets and quarantine on a local folder
// and on S3 (gofakes3 on 127.0.0.1).
func TestEveryStoreKind(t *testing.T) { eachHasher(t, testEveryStoreKind) }

func testEveryStoreKind(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			st := k.open(t)
			injected := corruptStore(t, st, 40)
			rep := run(t, verify.Options{Store: st, Jobs: 2}) // two workers pair on any machine
			if got := keysOf(rep.Corrupt); fmt.Sprint(got) != fmt.Sprint(injected) {
				t.Fatalf("corrupt %v, want %v", got, injected)
			}

			// Seven nightly runs check every blob exactly once.
			seen := map[string]int{}
			for n := 1; n <= 7; n++ {
				r := run(t, verify.Options{Store: st, Jobs: 2, Subset: verify.Subset{N: n, T: 7}, OnResult: func(r verify.Result) { seen[r.Key]++ }})
				if r.Fraction <= 0 || r.Fraction >= 1 {
					t.Errorf("subset %d/7 checked fraction %v", n, r.Fraction)
				}
			}
			if len(seen) != 40 {
				t.Fatalf("subsets covered %d of 40 blobs", len(seen))
			}
			for key, times := range seen {
				if times != 1 {
					t.Fatalf("%s checked %d times across the subsets", key, times)
				}
			}

			// Quarantine moves exactly the corrupt set, with a manifest line each.
			q := k.open(t)
			qr, err := verify.Quarantine(context.Background(), locktest.Of(t, st), q, rep.Corrupt, time.Unix(1700000000, 0))
			must(t, err)
			if len(qr.Moved) != len(injected) || len(qr.Kept) != 0 {
				t.Fatalf("moved %d kept %+v", len(qr.Moved), qr.Kept)
			}
			rc, err := q.Open(context.Background(), qr.Manifest)
			must(t, err)
			var manifest bytes.Buffer
			manifest.ReadFrom(rc)
			rc.Close()
			if lines := strings.Count(manifest.String(), "\n"); lines != len(injected) {
				t.Fatalf("manifest has %d lines:\n%s", lines, manifest.String())
			}
			for _, m := range qr.Moved {
				if _, err := q.Stat(context.Background(), m.Moved); err != nil {
					t.Errorf("%s not in quarantine: %v", m.Key, err)
				}
				if !strings.Contains(manifest.String(), `"actual":"`+m.Actual+`"`) {
					t.Errorf("manifest misses %s", m.Key)
				}
			}
			// What is left is intact.
			again := run(t, verify.Options{Store: st, Jobs: 2})
			if len(again.Corrupt) != 0 || again.Counts[verify.OK] != 40-int64(len(injected)) || !again.Complete {
				t.Fatalf("after quarantine: %+v", again)
			}
		})
	}
}

func TestSampleIsAFractionAndSeeded(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	must(t, err)
	defer st.Close()
	for i := range 400 {
		c := []byte(fmt.Sprint(i))
		put(t, st, name(c, ".bin"), c)
	}
	var first []string
	for range 2 {
		var keys []string
		rep := run(t, verify.Options{Store: st, Sample: 0.25, Seed: 42, OnResult: func(r verify.Result) { keys = append(keys, r.Key) }})
		if rep.Selected < 60 || rep.Selected > 140 || rep.Blobs != 400 || rep.Counts[verify.OK] != rep.Selected {
			t.Fatalf("sample 25%%: selected %d of %d", rep.Selected, rep.Blobs)
		}
		sort.Strings(keys)
		if first != nil && fmt.Sprint(first) != fmt.Sprint(keys) {
			t.Fatal("the same seed chose different blobs")
		}
		first = keys
	}
}

// TestAnomalies: each odd entry gets its category, and a symlink that points
// outside the store is reported without its target being read (the target is a
// FIFO: reading it would block the test).
func TestAnomalies(t *testing.T) { eachHasher(t, testAnomalies) }

func testAnomalies(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	fifo := filepath.Join(outside, "never-read")
	must(t, syscall.Mkfifo(fifo, 0o600))
	png := []byte("\x89PNG\r\n\x1a\nrest of a png")
	pdf := []byte("%PDF-1.4 a document")
	files := map[string][]byte{
		name(png, ".png"):     png,
		name(pdf, ".png"):     pdf, // a PDF named .png
		name(nil, ""):         nil, // empty, and rightly named
		name(png, ".png.tmp"): png, // leftover of an atomic write
		"opaque-upload.jpg":   []byte("no digest in the name"),
		name([]byte("w"), ""): []byte("w"),
	}
	for k, c := range files {
		must(t, os.WriteFile(filepath.Join(dir, k), c, 0o600))
	}
	must(t, os.Chmod(filepath.Join(dir, name([]byte("w"), "")), 0o644))
	linkName := name([]byte("link"), ".png")
	must(t, os.Symlink(fifo, filepath.Join(dir, linkName)))
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600))

	st, err := store.Open(context.Background(), dir)
	must(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := verify.Run(ctx, verify.Options{Store: st, Jobs: 2}) // two workers pair on any machine
	must(t, err)

	got := map[string]string{}
	for _, a := range rep.Anomalies {
		got[a.Key] += string(a.Kind) + ":" + a.Detail + ";"
	}
	want := map[string]string{
		linkName:              "symlink:points to " + fifo,
		"pipe":                "not-regular:",
		name(png, ".png.tmp"): "temporary:",
		name(nil, ""):         "empty:",
		name(pdf, ".png"):     "wrong-extension:named .png but the content is pdf",
		name([]byte("w"), ""): "wide-permissions:mode 0644 grants more than the store's usual 0600",
	}
	for k, w := range want {
		if !strings.Contains(got[k], w) {
			t.Errorf("%s: anomalies %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("anomalies %v", got)
	}
	if rep.Counts[verify.OK] != 4 || rep.Counts[verify.Unverifiable] != 1 || len(rep.Corrupt) != 0 || rep.Blobs != 5 {
		t.Errorf("counts %v blobs %d", rep.Counts, rep.Blobs)
	}
}

func TestFastChecksStoredDigest(t *testing.T) {
	st := kinds(t)[1].open(t)
	good := []byte("good")
	bad := []byte("bad")
	ctx := context.Background()
	must(t, st.Put(ctx, name(good, ".bin"), bytes.NewReader(good), store.PutOptions{Metadata: map[string]string{"sha256": name(good, "")}}))
	must(t, st.Put(ctx, name(bad, ".bin"), bytes.NewReader([]byte("bat")), store.PutOptions{Metadata: map[string]string{"sha256": name([]byte("bat"), "")}}))
	must(t, st.Put(ctx, name([]byte("plain"), ".bin"), bytes.NewReader([]byte("plain")), store.PutOptions{}))
	must(t, st.Put(ctx, "opaque/u.png", bytes.NewReader(good), store.PutOptions{Metadata: map[string]string{"sha256": name(good, "")}}))
	rep := run(t, verify.Options{Store: st, Fast: true})
	if rep.Mode != "fast" || rep.BytesRead != 0 || rep.Counts[verify.OK] != 2 || rep.Counts[verify.Corrupt] != 1 || rep.Counts[verify.Unverifiable] != 1 {
		t.Fatalf("fast: mode %s read %d counts %v", rep.Mode, rep.BytesRead, rep.Counts)
	}
	// Without --fast an opaque name with a stored sha256 is hashed against it.
	full := run(t, verify.Options{Store: st})
	if full.Counts[verify.OK] != 3 || full.Counts[verify.Corrupt] != 1 {
		t.Fatalf("full: %v", full.Counts)
	}
}

func TestSessionsDanglingOrphansAndReferencedCorruptFirst(t *testing.T) {
	root := t.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sess := filepath.Join(root, ".forge", "sessions")
	must(t, os.MkdirAll(inbound, 0o700))
	must(t, os.MkdirAll(sess, 0o700))
	used, orphan, usedBad, loneBad := []byte("used"), []byte("orphan"), []byte("used-bad"), []byte("lone-bad")
	for _, c := range [][]byte{used, orphan} {
		must(t, os.WriteFile(filepath.Join(inbound, name(c, ".png")), c, 0o600))
	}
	must(t, os.WriteFile(filepath.Join(inbound, name(usedBad, ".png")), []byte("x"), 0o600))
	must(t, os.WriteFile(filepath.Join(inbound, name(loneBad, ".png")), []byte("y"), 0o600))
	doc := fmt.Sprintf(`{"messages":[{"parts":[{"media":{"uri":"%s/%s"}},{"media":{"uri":".forge/files/inbound/%s"}},{"media":{"uri":"./%s"}}]}]}`,
		inbound, name(used, ".png"), name(usedBad, ".png"), name([]byte("gone"), ".png"))
	must(t, os.WriteFile(filepath.Join(sess, "t.json"), []byte(doc), 0o600))

	ctx := context.Background()
	st, err := store.Open(ctx, inbound)
	must(t, err)
	defer st.Close()
	src, err := sessions.Open(ctx, sess, sessions.Options{})
	must(t, err)
	defer src.Close()
	rep := run(t, verify.Options{Store: st, Sessions: []sessions.Source{src}, Bases: []string{root}})
	if rep.Sessions == nil || rep.Sessions.Scan.DanglingReferences != 1 {
		t.Fatalf("sessions %+v", rep.Sessions)
	}
	if rep.Sessions.Orphans != 2 || rep.Sessions.OrphanBytes != int64(len(orphan)+1) || rep.Sessions.ReferencedCorrupt != 1 {
		t.Fatalf("orphans %d (%d bytes)", rep.Sessions.Orphans, rep.Sessions.OrphanBytes)
	}
	if len(rep.Corrupt) != 2 || rep.Corrupt[0].Key != name(usedBad, ".png") || !rep.Corrupt[0].Referenced || rep.Corrupt[1].Referenced || rep.ReferencedCorrupt() != 1 {
		t.Fatalf("corrupt %+v", rep.Corrupt)
	}
}

// TestQuarantineAcrossFileSystems: into a quarantine on another file system
// (tmpfs /dev/shm) a rename cannot work; the blob is copied, the copy proven,
// and only then removed.
func TestQuarantineAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "mediactl-quarantine-")
	if err != nil {
		t.Skipf("no tmpfs at /dev/shm to cross file systems: %v", err)
	}
	defer os.RemoveAll(shm)
	var a, b syscall.Stat_t
	dir := t.TempDir()
	if syscall.Stat(shm, &a) != nil || syscall.Stat(dir, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same file system as the test's temp dir")
	}
	st, err := store.Open(context.Background(), dir)
	must(t, err)
	defer st.Close()
	good := []byte("good")
	put(t, st, name(good, ".bin"), good)
	put(t, st, name([]byte("meant"), ".bin"), []byte("got"))
	q, err := store.Open(context.Background(), shm)
	must(t, err)
	defer q.Close()
	rep := run(t, verify.Options{Store: st})
	qr, err := verify.Quarantine(context.Background(), locktest.Of(t, st), q, rep.Corrupt, time.Now())
	must(t, err)
	if len(qr.Moved) != 1 || qr.Moved[0].How != "copy" || len(qr.Kept) != 0 {
		t.Fatalf("moved %+v kept %+v", qr.Moved, qr.Kept)
	}
	if _, err := st.Stat(context.Background(), name([]byte("meant"), ".bin")); err == nil {
		t.Fatal("the corrupt blob is still in the store")
	}
	b2, err := os.ReadFile(filepath.Join(shm, qr.Moved[0].Moved))
	if err != nil || string(b2) != "got" {
		t.Fatalf("quarantined copy %q, %v", b2, err)
	}
}

// TestVanishedBlobsAreUnreadable: blobs that another client deletes between
// the listing and the read (a real 404 from the S3 server) are unreadable and
// make the run incomplete (exit 3) — never "ok", never "corrupt". One worker,
// reading one blob at a time, so that the blobs vanish after the first result
// and before the rest are read.
func TestVanishedBlobsAreUnreadable(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	st, err := store.Open(context.Background(), srv.Bucket(t, "vanish"))
	must(t, err)
	defer st.Close()
	var keys []string
	for i := range 200 {
		c := []byte(fmt.Sprint(i))
		keys = append(keys, name(c, ".bin"))
		put(t, st, keys[i], c)
	}
	seen := 0
	rep := run(t, verify.Options{Store: st, Jobs: 1, OnResult: func(verify.Result) {
		if seen++; seen == 1 {
			for _, k := range keys {
				srv.Backend.DeleteObject("vanish", k)
			}
		}
	}})
	if rep.Complete || rep.Counts[verify.Corrupt] != 0 || rep.Counts[verify.Unreadable] == 0 {
		t.Fatalf("complete=%v counts=%v", rep.Complete, rep.Counts)
	}
	if rep.Counts[verify.OK]+rep.Counts[verify.Unreadable] != rep.Selected {
		t.Fatalf("counts %v do not add up to %d selected", rep.Counts, rep.Selected)
	}
	for _, u := range rep.Unreadable {
		if !strings.Contains(u.Err, "not") || u.Category != verify.Unreadable {
			t.Errorf("unreadable without a reason: %+v", u)
		}
	}
}

// eachHasher runs test with blobs hashed two at a time per worker (the default
// where the CPU has SHA-NI; elsewhere through the portable code) and one at a
// time.
func eachHasher(t *testing.T, test func(t *testing.T)) {
	for _, c := range []struct {
		name string
		pair bool
	}{{"paired", true}, {"single", false}} {
		t.Run(c.name, func(t *testing.T) {
			defer verify.SetPairHashing(c.pair)()
			test(t)
		})
	}
}

// TestPairedLanesMixedSizes: blobs from empty to several read chunks long, a
// tenth of them corrupt in their last byte, checked by two workers that pair
// blobs ending at different times and by one that reads one blob at a time:
// both find exactly the corrupt ones and count every byte.
func TestPairedLanesMixedSizes(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	must(t, err)
	defer st.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	var want []string
	var total int64
	keys := map[string]bool{}
	for i := range 150 {
		size := rng.IntN(700 << 10)
		switch i % 15 {
		case 0:
			size = 0
		case 1:
			size = 256 << 10 // exactly one read chunk
		case 2:
			size = 1 + rng.IntN(63)
		}
		c := make([]byte, size)
		for j := range c {
			c[j] = byte(rng.Uint32())
		}
		k := name(c, ".bin")
		if i%10 == 3 && size > 0 {
			c[size-1] ^= 1
			want = append(want, k)
		}
		if !keys[k] { // the empty blobs share one name
			keys[k] = true
			put(t, st, k, c)
			total += int64(size)
		}
	}
	sort.Strings(want)
	for _, c := range []struct {
		pair bool
		jobs int
	}{{true, 2}, {true, 3}, {false, 2}, {true, 1}} {
		restore := verify.SetPairHashing(c.pair)
		rep := run(t, verify.Options{Store: st, Jobs: c.jobs})
		restore()
		if got := keysOf(rep.Corrupt); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("pair %v, jobs %d: corrupt = %v, want %v", c.pair, c.jobs, got, want)
		}
		if ok := int64(len(keys) - len(want)); rep.BytesRead != total || rep.Counts[verify.OK] != ok {
			t.Errorf("pair %v, jobs %d: read %d bytes, %d ok; want %d bytes, %d ok", c.pair, c.jobs, rep.BytesRead, rep.Counts[verify.OK], total, ok)
		}
	}
}

// noRename is a local store whose owner says it must not be renamed out of
// (as a wrapper that routes moves elsewhere would): quarantine copies.
type noRename struct{ *store.LocalStore }

func (noRename) Drops() store.Features { return store.FeatureMoveTo }

// TestQuarantineRenamesOnlyWhereOffered: between two local folders of one file
// system a corrupt blob is renamed; from a store that drops MoveTo, though it
// has the method, it is copied, the copy proven, and the original removed.
func TestQuarantineRenamesOnlyWhereOffered(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		wrap func(*store.LocalStore) store.Store
		how  string
	}{
		{"local", func(s *store.LocalStore) store.Store { return s }, "rename"},
		{"drops MoveTo", func(s *store.LocalStore) store.Store { return noRename{s} }, "copy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			must(t, os.Mkdir(filepath.Join(parent, "store"), 0o700))
			must(t, os.Mkdir(filepath.Join(parent, "quarantine"), 0o700))
			ls, err := store.OpenLocal(filepath.Join(parent, "store"))
			must(t, err)
			defer ls.Close()
			q, err := store.OpenLocal(filepath.Join(parent, "quarantine"))
			must(t, err)
			defer q.Close()
			st := c.wrap(ls)
			corrupt := name([]byte("meant"), ".png")
			put(t, st, corrupt, []byte("got"))
			put(t, st, name([]byte("good"), ".png"), []byte("good"))
			rep := run(t, verify.Options{Store: st})
			qr, err := verify.Quarantine(ctx, locktest.Of(t, st), q, rep.Corrupt, time.Now())
			must(t, err)
			if len(qr.Moved) != 1 || qr.Moved[0].How != c.how || len(qr.Kept) != 0 {
				t.Fatalf("moved %+v kept %+v; want one moved by %s", qr.Moved, qr.Kept, c.how)
			}
			if _, err := st.Stat(ctx, corrupt); err == nil {
				t.Fatal("the corrupt blob is still in the store")
			}
			if b, err := os.ReadFile(filepath.Join(parent, "quarantine", qr.Moved[0].Moved)); err != nil || string(b) != "got" {
				t.Fatalf("quarantined %q, %v", b, err)
			}
		})
	}
}

// TestQuarantineFailureIsNotAFact: a corrupt blob a writer replaced since it
// was hashed is kept as changed (a fact); one the quarantine cannot take (its
// run folder is a file) is kept as a failure of the run.
func TestQuarantineFailureIsNotAFact(t *testing.T) {
	ctx := context.Background()
	dir, qdir := t.TempDir(), t.TempDir()
	st, err := store.OpenLocal(dir)
	must(t, err)
	defer st.Close()
	q, err := store.OpenLocal(qdir)
	must(t, err)
	defer q.Close()
	replaced := name([]byte("meant one"), ".png")
	stuck := name([]byte("meant two"), ".png")
	put(t, st, replaced, []byte("got one"))
	put(t, st, stuck, []byte("got two"))
	rep := run(t, verify.Options{Store: st})
	if len(rep.Corrupt) != 2 {
		t.Fatalf("corrupt %+v", rep.Corrupt)
	}
	must(t, os.WriteFile(filepath.Join(dir, replaced), []byte("meant one"), 0o600)) // a writer fixed it
	now := time.Unix(1700000000, 0)
	folder := now.UTC().Format("20060102T150405.000000000Z")
	must(t, os.WriteFile(filepath.Join(qdir, folder), []byte("not a folder"), 0o600))
	qr, err := verify.Quarantine(ctx, locktest.Of(t, st), q, rep.Corrupt, now)
	if err == nil {
		t.Fatal("the manifest was written into a file")
	}
	if len(qr.Moved) != 0 || len(qr.Kept) != 2 || qr.Failed() != 1 {
		t.Fatalf("moved %+v kept %+v failed %d", qr.Moved, qr.Kept, qr.Failed())
	}
	for _, k := range qr.Kept {
		if k.Changed != (k.Key == replaced) {
			t.Errorf("%s: changed %v (%s)", k.Key, k.Changed, k.Err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, stuck)); err != nil {
		t.Fatalf("the blob the quarantine could not take left the store: %v", err)
	}
}
