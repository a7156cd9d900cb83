package gc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func name(content string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:]) + ".png"
}

// fixture is a forge-like work dir: blobs in inbound/, sessions in sessions/.
type fixture struct {
	root, inbound, sess string
	st                  store.Store
	src                 sessions.Source
}

func newFixture(t testing.TB) *fixture {
	root := t.TempDir()
	f := &fixture{root: root, inbound: filepath.Join(root, "inbound"), sess: filepath.Join(root, "sessions")}
	must(t, os.MkdirAll(f.inbound, 0o700))
	must(t, os.MkdirAll(f.sess, 0o700))
	var err error
	f.st, err = store.Open(context.Background(), f.inbound)
	must(t, err)
	f.src, err = sessions.Open(context.Background(), f.sess, sessions.Options{})
	must(t, err)
	t.Cleanup(func() { f.st.Close(); f.src.Close() })
	return f
}

// blob writes a blob aged age and returns its key.
func (f *fixture) blob(t testing.TB, content string, age time.Duration) string {
	k := name(content)
	p := filepath.Join(f.inbound, k)
	must(t, os.WriteFile(p, []byte(content), 0o600))
	mt := time.Now().Add(-age)
	must(t, os.Chtimes(p, mt, mt))
	return k
}

func (f *fixture) session(t testing.TB, file string, keys ...string) {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(`{"media":{"uri":%q}}`, filepath.Join(f.inbound, k)))
	}
	must(t, os.WriteFile(filepath.Join(f.sess, file), []byte(`{"messages":[{"parts":[`+strings.Join(parts, ",")+`]}]}`), 0o600))
}

func (f *fixture) plan(t testing.TB, opts gc.Options) *gc.Plan {
	t.Helper()
	opts.Store = f.st
	if opts.Policy != gc.Age || opts.KeepReferenced {
		opts.Sessions = []sessions.Source{f.src}
	}
	p, err := gc.MakePlan(context.Background(), opts)
	must(t, err)
	return p
}

func keys(p *gc.Plan) []string {
	var out []string
	for k := range p.Candidates.Keys() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string { sort.Strings(s); return s }

func TestPolicies(t *testing.T) {
	f := newFixture(t)
	day := 24 * time.Hour
	usedOld := f.blob(t, "used-old", 40*day)
	unusedOld := f.blob(t, "unused-old", 40*day)
	unusedMid := f.blob(t, "unused-mid", 3*day)
	unusedFresh := f.blob(t, "unused-fresh", time.Hour) // its session may not be saved yet
	usedFresh := f.blob(t, "used-fresh", time.Hour)
	f.session(t, "t-1.json", usedOld, usedFresh)
	// A digest in prose keeps a blob too (the conservative rule).
	proseKept := f.blob(t, "prose", 40*day)
	must(t, os.WriteFile(filepath.Join(f.sess, "t-2.json"), []byte(`{"content":"see sha256 `+strings.TrimSuffix(proseKept, ".png")+`"}`), 0o600))
	// Never candidates: a symlink, a temp file.
	must(t, os.Symlink("/etc/passwd", filepath.Join(f.inbound, name("link"))))
	must(t, os.WriteFile(filepath.Join(f.inbound, "x.png.tmp"), []byte("half"), 0o600))
	old := time.Now().Add(-60 * day)
	os.Chtimes(filepath.Join(f.inbound, "x.png.tmp"), old, old)

	p := f.plan(t, gc.Options{})
	if got, want := keys(p), sorted(unusedOld, unusedMid); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refcount: %v, want %v", got, want)
	}
	if p.Blobs != 6 || p.Referenced != 3 || !p.Complete {
		t.Errorf("refcount plan: blobs %d referenced %d complete %v", p.Blobs, p.Referenced, p.Complete)
	}
	p = f.plan(t, gc.Options{Policy: gc.Age, MaxAge: 30 * day})
	if got, want := keys(p), sorted(usedOld, unusedOld, proseKept); fmt.Sprint(got) != fmt.Sprint(want) || p.ReferencedCandidates != 0 || p.SessionsRead {
		t.Errorf("age: %v, want %v (referenced %d)", got, want, p.ReferencedCandidates)
	}
	p = f.plan(t, gc.Options{Policy: gc.Age, MaxAge: 30 * day, Sessions: nil, KeepReferenced: true})
	if got, want := keys(p), sorted(unusedOld); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("age, keep referenced: %v, want %v", got, want)
	}
	// Size cap: oldest unreferenced first, just enough to get under the cap.
	total := p.Bytes
	p = f.plan(t, gc.Options{MaxSize: total - 1})
	if got, want := keys(p), sorted(unusedOld); fmt.Sprint(got) != fmt.Sprint(want) || !p.CapMet {
		t.Errorf("size cap: %v, want %v (cap met %v)", got, want, p.CapMet)
	}
	p = f.plan(t, gc.Options{MaxSize: 1})
	if got := keys(p); len(got) != 2 || p.CapMet {
		t.Errorf("unreachable cap: %v, cap met %v", got, p.CapMet)
	}
	_ = unusedFresh
}

func TestIncompletePlanDeletesNothing(t *testing.T) {
	f := newFixture(t)
	k := f.blob(t, "orphan", 48*time.Hour)
	f.session(t, "ok.json")
	must(t, os.WriteFile(filepath.Join(f.sess, "cut.json"), []byte(`{"messages": [`), 0o600))
	p := f.plan(t, gc.Options{})
	if p.Complete || p.Candidates.Len() != 1 {
		t.Fatalf("complete=%v candidates=%v", p.Complete, keys(p))
	}
	if err := p.Check(gc.Guards{}); !errors.Is(err, gc.ErrIncomplete) || !strings.Contains(err.Error(), "cut.json") {
		t.Fatalf("Check = %v", err)
	}
	if _, err := p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{}); !errors.Is(err, gc.ErrIncomplete) {
		t.Fatalf("Execute = %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, k)); err != nil {
		t.Fatal("a blob was removed by an incomplete plan")
	}
}

func TestGuards(t *testing.T) {
	f := newFixture(t)
	for i := range 10 {
		f.blob(t, fmt.Sprint(i), 48*time.Hour)
	}
	f.session(t, "unrelated.json") // sessions that name nothing: a wrong path looks like this
	p := f.plan(t, gc.Options{})
	var re *gc.RefusedError
	if err := p.Check(gc.Guards{}); !errors.As(err, &re) || re.Guard != gc.NoReferences || re.Blobs != 10 {
		t.Fatalf("zero-reference guard: %v", err)
	}
	if err := p.Check(gc.Guards{AllowNoReferences: true, MaxDeletePercent: 50}); !errors.As(err, &re) || re.Guard != gc.MaxDeletePercent || !strings.Contains(re.Error(), "10 of 10 blobs (100.0%)") {
		t.Fatalf("max-delete guard: %v", err)
	}
	if err := p.Check(gc.Guards{AllowNoReferences: true, MaxDeleteCount: 5}); !errors.As(err, &re) || re.Guard != gc.MaxDeleteCount || re.Candidates != 10 || re.Limit != 5 {
		t.Fatalf("max-delete count guard: %v", err)
	}
	if err := p.Check(gc.Guards{AllowNoReferences: true, MaxDeletePercent: 100}); err != nil {
		t.Fatalf("overridden guards: %v", err)
	}
}

func TestTrashRestorePurge(t *testing.T) {
	f := newFixture(t)
	a := f.blob(t, "aaaa", 72*time.Hour)
	b := f.blob(t, "bbbbbb", 96*time.Hour)
	kept := f.blob(t, "kept", 72*time.Hour)
	f.session(t, "s.json", kept)
	before := map[string]os.FileInfo{}
	for _, k := range []string{a, b} {
		fi, err := os.Stat(filepath.Join(f.inbound, k))
		must(t, err)
		before[k] = fi
	}
	p := f.plan(t, gc.Options{})
	now := time.Now().Add(-10 * 24 * time.Hour) // a run ten days ago
	res, err := p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{Now: now})
	must(t, err)
	if res.Trashed != 2 || res.Bytes != 10 || len(res.Failed)+len(res.Skipped) != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, k := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(f.inbound, k)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still in the store", k)
		}
		if _, err := os.Stat(filepath.Join(f.inbound, ".mediactl", "trash", res.Run, k)); err != nil {
			t.Fatalf("%s not in the trash: %v", k, err)
		}
	}
	runs, err := trash.Runs(context.Background(), f.st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != res.Run || runs[0].Blobs != 2 {
		t.Fatalf("runs %+v", runs)
	}
	rr, err := trash.Restore(context.Background(), locktest.Of(t, f.st), res.Run)
	must(t, err)
	if rr.Restored != 2 || len(rr.Kept) != 0 {
		t.Fatalf("restore %+v", rr)
	}
	for k, fi := range before {
		got, err := os.Stat(filepath.Join(f.inbound, k))
		must(t, err)
		b, _ := os.ReadFile(filepath.Join(f.inbound, k))
		if name(string(b)) != k || !got.ModTime().Equal(fi.ModTime()) || got.Mode() != fi.Mode() {
			t.Errorf("%s restored with content %q, mtime %v (was %v), mode %v", k, b, got.ModTime(), fi.ModTime(), got.Mode())
		}
	}
	// Trash again, then purge runs older than a week.
	p = f.plan(t, gc.Options{})
	res, err = p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{Now: now})
	must(t, err)
	fresh, err := f.plan(t, gc.Options{}).Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{})
	must(t, err)
	if fresh.Trashed != 0 {
		t.Fatalf("second run trashed %d", fresh.Trashed)
	}
	pr, err := trash.Purge(context.Background(), locktest.Of(t, f.st), time.Now().Add(-7*24*time.Hour), store.Recovery{})
	must(t, err)
	if len(pr.Runs) != 1 || pr.Runs[0] != res.Run || pr.Blobs != 2 {
		t.Fatalf("purge %+v", pr)
	}
	if runs, _ := trash.Runs(context.Background(), f.st); len(runs) != 0 {
		t.Fatalf("runs after purge %+v", runs)
	}
}

// TestChangedSincePlanIsSkipped: a writer that re-creates a blob between the
// plan and the sweep wins.
func TestChangedSincePlanIsSkipped(t *testing.T) {
	f := newFixture(t)
	a := f.blob(t, "rewritten", 48*time.Hour)
	b := f.blob(t, "untouched", 48*time.Hour)
	f.session(t, "s.json")
	p := f.plan(t, gc.Options{})
	// The writer writes the same content again (content-addressed: same name).
	must(t, os.WriteFile(filepath.Join(f.inbound, a), []byte("rewritten"), 0o600))
	res, err := p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{})
	must(t, err)
	if res.Trashed != 1 || len(res.Skipped) != 1 || res.Skipped[0].Key != a {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, a)); err != nil {
		t.Fatal("the re-created blob was removed")
	}
	_ = b
}

// TestConcurrentWriterLosesNothing: a writer keeps adding blobs and, a moment
// later, sessions naming them, while gc plans and sweeps in a loop. No blob a
// session names may ever be missing.
func TestConcurrentWriterLosesNothing(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var written atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; ctx.Err() == nil; i++ {
			c := fmt.Sprintf("blob-%d", i)
			must(t, os.WriteFile(filepath.Join(f.inbound, name(c)), []byte(c), 0o600))
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // the session is saved later
			f.session(t, fmt.Sprintf("s-%05d.json", i), name(c))
			if i%7 == 0 {
				// An orphan too, so that gc has something to do.
				o := fmt.Sprintf("orphan-%d", i)
				must(t, os.WriteFile(filepath.Join(f.inbound, name(o)), []byte(o), 0o600))
			}
			written.Add(1)
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	var trashed int64
	for round := 0; time.Now().Before(deadline); round++ {
		p := f.plan(t, gc.Options{MinAge: 200 * time.Millisecond})
		if p.Complete {
			res, err := p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{})
			must(t, err)
			trashed += res.Trashed
		}
	}
	cancel()
	wg.Wait()
	// Every blob a session names is in the store.
	des, err := os.ReadDir(f.sess)
	must(t, err)
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(f.sess, de.Name()))
		must(t, err)
		i := bytes.Index(b, []byte(`"uri":"`))
		uri := string(b[i+7 : i+7+bytes.IndexByte(b[i+7:], '"')])
		if _, err := os.Stat(uri); err != nil {
			t.Fatalf("%s names %s, which gc removed", de.Name(), filepath.Base(uri))
		}
	}
	if written.Load() < 10 || trashed == 0 {
		t.Fatalf("the test exercised too little: %d written, %d trashed", written.Load(), trashed)
	}
	t.Logf("%d blobs written, %d orphans trashed, none referenced lost", written.Load(), trashed)
}

// TestKillNineAtAnyPoint: a sweep killed with SIGKILL at random moments leaves
// every blob either in the store or in the trash, never neither; a rerun
// completes.
func TestKillNineAtAnyPoint(t *testing.T) {
	if os.Getenv("MEDIACTL_GC_CHILD") != "" {
		return
	}
	f := newFixture(t)
	contents := map[string]string{}
	for i := range 400 {
		c := fmt.Sprintf("orphan-%d", i)
		contents[f.blob(t, c, 48*time.Hour)] = c
	}
	used := f.blob(t, "used", 48*time.Hour)
	contents[used] = "used"
	f.session(t, "s.json", used)
	for i, delay := range []time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 80 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGCChild$")
		cmd.Env = append(os.Environ(), "MEDIACTL_GC_CHILD="+f.root)
		must(t, cmd.Start())
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// Every blob is somewhere, intact.
		for k, c := range contents {
			b, err := os.ReadFile(filepath.Join(f.inbound, k))
			if err != nil {
				b, err = findInTrash(f.inbound, k)
			}
			if err != nil || string(b) != c {
				t.Fatalf("kill %d (after %v): %s is in neither the store nor the trash (%v)", i, delay, k, err)
			}
		}
		trashed, _ := filepath.Glob(filepath.Join(f.inbound, ".mediactl", "trash", "*", "*.png"))
		t.Logf("killed after %v: %d blobs in the trash so far, none lost", delay, len(trashed))
	}
	// A rerun in this process completes the job.
	p := f.plan(t, gc.Options{})
	_, err := p.Execute(context.Background(), locktest.Of(t, f.st), gc.ExecOptions{})
	must(t, err)
	left, _ := os.ReadDir(f.inbound)
	var blobs []string
	for _, de := range left {
		if !de.IsDir() {
			blobs = append(blobs, de.Name())
		}
	}
	if len(blobs) != 1 || blobs[0] != used {
		t.Fatalf("after the rerun the store holds %v", blobs)
	}
}

func findInTrash(inbound, key string) ([]byte, error) {
	matches, _ := filepath.Glob(filepath.Join(inbound, ".mediactl", "trash", "*", key))
	if len(matches) == 0 {
		return nil, os.ErrNotExist
	}
	return os.ReadFile(matches[0])
}

// TestGCChild is the process TestKillNineAtAnyPoint kills: a plan and a sweep.
func TestGCChild(t *testing.T) {
	root := os.Getenv("MEDIACTL_GC_CHILD")
	if root == "" {
		t.Skip("run by TestKillNineAtAnyPoint")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, "inbound"))
	must(t, err)
	src, err := sessions.Open(ctx, filepath.Join(root, "sessions"), sessions.Options{})
	must(t, err)
	p, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: []sessions.Source{src}})
	must(t, err)
	_, err = p.Execute(ctx, locktest.Of(t, st), gc.ExecOptions{})
	must(t, err)
}

// TestBucket runs the policies, the sweep and restore on S3 (gofakes3 on
// 127.0.0.1). Object times are set by the server, so the plan's clock is moved
// forward instead of the blobs' back.
func TestBucket(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, srv.Bucket(t, "media")+"&prefix=agent-inputs/")
	must(t, err)
	defer st.Close()
	for _, k := range []string{"u/t/uploads/used.png", "u/t/uploads/orphan.png", "u/t/uploads/orphan2.pdf"} {
		must(t, st.Put(ctx, k, strings.NewReader("bytes of "+k), store.PutOptions{}))
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"attachments":[{"bucket":"media","path":"agent-inputs/u/t/uploads/used.png"}]}`), 0o600))
	src, err := sessions.Open(ctx, dir, sessions.Options{})
	must(t, err)
	defer src.Close()
	later := time.Now().Add(72 * time.Hour)

	p, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: []sessions.Source{src}, Now: later})
	must(t, err)
	if got := keys(p); fmt.Sprint(got) != "[u/t/uploads/orphan.png u/t/uploads/orphan2.pdf]" {
		t.Fatalf("refcount on S3: %v", got)
	}
	ap, err := gc.MakePlan(ctx, gc.Options{Store: st, Policy: gc.Age, MaxAge: 48 * time.Hour, Now: later})
	must(t, err)
	if ap.Candidates.Len() != 3 {
		t.Fatalf("age on S3: %v", keys(ap))
	}
	capped, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: []sessions.Source{src}, Now: later, MaxSize: p.Bytes - 1})
	must(t, err)
	if capped.Candidates.Len() != 1 || !capped.CapMet {
		t.Fatalf("size cap on S3: %v (met %v)", keys(capped), capped.CapMet)
	}
	res, err := p.Execute(ctx, locktest.Of(t, st), gc.ExecOptions{})
	must(t, err)
	if res.Trashed != 2 {
		t.Fatalf("S3 sweep %+v", res)
	}
	var left []string
	st.List(ctx, "", func(e store.Entry) error { left = append(left, e.Key); return nil })
	if fmt.Sprint(left) != "[u/t/uploads/used.png]" {
		t.Fatalf("left on S3: %v", left)
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, st), res.Run)
	must(t, err)
	if rr.Restored != 2 {
		t.Fatalf("S3 restore %+v", rr)
	}
	rc, err := st.Open(ctx, "u/t/uploads/orphan2.pdf")
	must(t, err)
	b := new(bytes.Buffer)
	b.ReadFrom(rc)
	rc.Close()
	if b.String() != "bytes of u/t/uploads/orphan2.pdf" {
		t.Fatalf("restored %q", b)
	}
}

// TestBucketThrottled: a bucket that keeps answering 503 SlowDown to deletes
// (the sweep's DeleteObjects requests, restore's single deletes), longer than
// the SDK retries on its own, still gets swept and restored completely: gc
// backs off and tries again; nothing is lost on the way.
func TestBucketThrottled(t *testing.T) {
	batch, wrapBatch := storetest.NewSlowDown(http.MethodPost, 3)
	single, wrapSingle := storetest.NewSlowDown(http.MethodDelete, 3)
	srv := storetest.StartS3(t, func(h http.Handler) http.Handler { return wrapBatch(wrapSingle(h)) })
	ctx := context.Background()
	st, err := store.Open(ctx, srv.Bucket(t, "slow"))
	must(t, err)
	defer st.Close()
	for i := range 2 {
		must(t, st.Put(ctx, fmt.Sprintf("orphan-%02d.png", i), strings.NewReader(fmt.Sprint(i)), store.PutOptions{}))
	}
	p, err := gc.MakePlan(ctx, gc.Options{Store: st, Policy: gc.Age, MaxAge: time.Hour, Now: time.Now().Add(2 * time.Hour)})
	must(t, err)
	res, err := p.Execute(ctx, locktest.Of(t, st), gc.ExecOptions{Jobs: 8})
	must(t, err)
	if res.Trashed != 2 || len(res.Failed) != 0 || batch.Refused() < 3 {
		t.Fatalf("trashed %d, failed %v, 503s answered to DeleteObjects %d", res.Trashed, res.Failed, batch.Refused())
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, st), res.Run)
	must(t, err)
	if rr.Restored != 2 || single.Refused() < 6 {
		t.Fatalf("restored %d, 503s answered to deletes %d", rr.Restored, single.Refused())
	}
	t.Logf("2 blobs swept and restored through %d SlowDown answers", batch.Refused()+single.Refused())
}

// TestTrashDir: with the trash in a folder of its own, a sweep, the list of
// runs, a restore and a purge work as with the store's internal trash, and the
// lock stays with the store.
func TestTrashDir(t *testing.T) {
	f := newFixture(t)
	a := f.blob(t, "aaaa", 72*time.Hour)
	f.session(t, "s.json")
	dirPath := filepath.Join(f.root, "trash")
	st, err := trash.AtDir(f.st, dirPath, trash.MoveInto)
	must(t, err)
	defer st.Close()
	p, err := gc.MakePlan(context.Background(), gc.Options{Store: st, Sessions: []sessions.Source{f.src}})
	must(t, err)
	res, err := p.Execute(context.Background(), locktest.Of(t, st), gc.ExecOptions{})
	must(t, err)
	if res.Trashed != 1 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dirPath, res.Run, a)); err != nil {
		t.Fatalf("not in the trash directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, ".mediactl", "trash")); err == nil {
		t.Fatal("the store's own trash was used")
	}
	runs, err := trash.Runs(context.Background(), st)
	must(t, err)
	if len(runs) != 1 || runs[0].Blobs != 1 {
		t.Fatalf("runs %+v", runs)
	}
	rr, err := trash.Restore(context.Background(), locktest.Of(t, st), res.Run)
	must(t, err)
	if b, err := os.ReadFile(filepath.Join(f.inbound, a)); rr.Restored != 1 || err != nil || string(b) != "aaaa" {
		t.Fatalf("restore %+v: %q %v", rr, b, err)
	}
	res, err = f.plan(t, gc.Options{}).Execute(context.Background(), locktest.Of(t, st), gc.ExecOptions{Now: time.Now().Add(-30 * 24 * time.Hour)})
	must(t, err)
	if res.Trashed != 1 {
		t.Fatalf("second sweep %+v", res)
	}
	pr, err := trash.Purge(context.Background(), locktest.Of(t, st), time.Now().Add(-7*24*time.Hour), store.Recovery{})
	must(t, err)
	if len(pr.Runs) != 1 || pr.Blobs != 1 {
		t.Fatalf("purge %+v", pr)
	}
}
