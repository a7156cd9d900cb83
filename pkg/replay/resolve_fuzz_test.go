package replay

import (
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/storekey"
)

// FuzzResolve feeds arbitrary references (and {bucket, path} keys) to the
// resolver: it never panics, refuses with a *RefusedError, and whatever it
// admits lies below a configured root, or in an allowed bucket below the
// bucket's URL prefix and one of its prefixes — with the given user only.
func FuzzResolve(f *testing.F) {
	base := f.TempDir()
	root := filepath.Join(base, "work", ".forge", "files")
	bucketDir := filepath.Join(base, "bucket")
	for _, d := range []string{root, bucketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	r, err := New(Config{
		Roots: []string{root},
		Buckets: []Bucket{
			{URL: "s3://media?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true&anonymous=true", Prefixes: []string{"inbound/", "agent-inputs/{user}/{thread}/uploads/"}},
			{URL: "s3://scoped/media/?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true&anonymous=true", Prefixes: []string{"media/inbound/"}},
			{URL: "file://" + bucketDir, Prefixes: []string{"agent-inputs/{user}/"}},
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	h := strings.Repeat("ab", 32)
	for _, s := range []string{
		root + "/inbound/" + h + ".png", "file://" + root + "/inbound/" + h + ".png", "file://localhost" + root + "/x",
		"file:" + root + "/a%2F..%2F..%2Fb", root + "/../x", root + "-x/y", ".forge/files/inbound/x.png", "/etc/passwd",
		"s3://media/inbound/" + h + ".png", "s3://media/agent-inputs/u1/t1/uploads/f.png", "s3://media/agent-inputs/u2/t1/uploads/f.png",
		"s3://media/agent-inputs/u1/t1/uploads/../../u2/t1/uploads/f.png", "s3://scoped/media/inbound/x", "s3://scoped/inbound/x",
		"s3://other/inbound/x", "gs://media/inbound/x", "file://" + bucketDir + "/agent-inputs/u1/x", "S3://media//inbound/x",
		"s3://media/.mediactl/trash/x", "s3://scoped/media/.mediactl/x", "file://" + bucketDir + "/agent-inputs/u1/../u2/x",
	} {
		f.Add(s, "agent-inputs/u1/t/uploads/x.png", true)
	}
	f.Fuzz(func(t *testing.T, ref, key string, withVars bool) {
		var vars Vars
		if withVars {
			vars = Vars{"user": "u1"}
		}
		tg, err := r.resolve(ref, vars)
		check(t, r, ref, tg, err, vars)
		tg, err = r.resolveObject(key, "s3", "media", key, vars)
		check(t, r, key, tg, err, vars)
	})
}

func check(t *testing.T, r *Replayer, ref string, tg target, err error, vars Vars) {
	if err != nil {
		var re *RefusedError
		if !errors.As(err, &re) || re.Ref != ref {
			t.Fatalf("resolve(%q) = %v, not a *RefusedError for it", ref, err)
		}
		return
	}
	switch {
	case tg.root != nil:
		if storekey.Valid(tg.rel) != nil || internal(tg.rel) {
			t.Fatalf("resolve(%q) admitted the invalid key %q", ref, tg.rel)
		}
		p := filepath.Join(tg.root.dir, filepath.FromSlash(tg.rel))
		if !below(p, tg.root.dir) || p != tg.root.dir+"/"+tg.rel {
			t.Fatalf("resolve(%q) = %s, not below the root %s", ref, p, tg.root.dir)
		}
		if strings.Contains(ref, "..") && !strings.Contains(tg.rel, "..") {
			t.Fatalf("resolve(%q) admitted a reference with a .. in it", ref)
		}
	case tg.bucket != nil:
		b := tg.bucket
		if storekey.Valid(tg.bucketK) != nil || internal(tg.key) || tg.key != b.store.Prefix()+tg.bucketK {
			t.Fatalf("resolve(%q) admitted key %q (%q in the store) of %s", ref, tg.key, tg.bucketK, b.location)
		}
		ok := false
		for _, p := range b.prefixes {
			ok = ok || p.match(tg.key, vars)
		}
		if !ok {
			t.Fatalf("resolve(%q) admitted %q, below none of the prefixes of %s", ref, tg.key, b.location)
		}
		if vars != nil && strings.HasPrefix(tg.key, "agent-inputs/") && strings.Split(tg.key, "/")[1] != "u1" {
			t.Fatalf("resolve(%q) admitted another user's key %q", ref, tg.key)
		}
		if !strings.HasPrefix(tg.key, "inbound/") && !strings.HasPrefix(tg.key, "agent-inputs/") && !strings.HasPrefix(tg.key, "media/inbound/") {
			t.Fatalf("resolve(%q) admitted %q", ref, tg.key)
		}
	default:
		t.Fatalf("resolve(%q) admitted nothing without an error", ref)
	}
}

// errReader returns its bytes, then err.
type errReader struct {
	b   []byte
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.b) == 0 {
		return 0, e.err
	}
	n := copy(p, e.b)
	e.b = e.b[n:]
	return n, nil
}

func (e *errReader) Close() error { return nil }

// TestVerifierSize: a source that ends before its announced size, or runs
// past it, fails with ErrDigestMismatch even when the bytes it gave hash to
// the digest; an I/O error is passed on as is, not as an end.
func TestVerifierSize(t *testing.T) {
	data := []byte("the whole blob")
	var want [32]byte
	copy(want[:], sha(data))
	for _, c := range []struct {
		name     string
		src      []byte
		wantSize int64
		err      error
	}{
		{"exact", data, int64(len(data)), nil},
		{"size unknown", data, -1, nil},
		{"short", data, int64(len(data)) + 1, ErrDigestMismatch},
		{"long", data, int64(len(data)) - 1, ErrDigestMismatch},
		{"other bytes", []byte("the whole blub"), int64(len(data)), ErrDigestMismatch},
		{"cut", data[:5], int64(len(data)), ErrDigestMismatch},
	} {
		v := newVerifier(&errReader{b: c.src, err: io.EOF}, "x", want, c.wantSize)
		_, err := io.ReadAll(v)
		if !errors.Is(err, c.err) || (c.err != nil && err == nil) {
			t.Errorf("%s: ReadAll = %v, want %v", c.name, err, c.err)
		}
	}
	boom := errors.New("connection reset")
	v := newVerifier(&errReader{b: data[:5], err: boom}, "x", want, int64(len(data)))
	if _, err := io.ReadAll(v); !errors.Is(err, boom) {
		t.Errorf("a failed source = %v, want its error", err)
	}
}

func sha(b []byte) []byte { d := sha256.Sum256(b); return d[:] }
