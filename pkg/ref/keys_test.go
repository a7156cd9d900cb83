package ref

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// The member-name tests are switches; the lists are what they must agree with.
func TestMemberNameSwitchesMatchLists(t *testing.T) {
	for _, k := range locationKeys {
		for _, v := range []string{k, strings.ToUpper(k), strings.ReplaceAll(k, "_", "-")} {
			if !isLocationKey([]byte(v)) {
				t.Errorf("isLocationKey(%q) = false", v)
			}
		}
	}
	for _, k := range pairKeys {
		for _, v := range []string{k, strings.ToUpper(k), strings.ToUpper(k[:1]) + k[1:]} {
			if !isPairKey([]byte(v)) {
				t.Errorf("isPairKey(%q) = false", v)
			}
		}
	}
	for _, v := range []string{"", "ur", "uris", "mimeType", "text", "media", "bucket", "file_name", "object-name", "pathx", "a_very_long_member_name"} {
		if isLocationKey([]byte(v)) {
			t.Errorf("isLocationKey(%q) = true", v)
		}
		if isPairKey([]byte(v)) {
			t.Errorf("isPairKey(%q) = true", v)
		}
	}
}

// isBlobName answers as blobname.Parse does.
func TestIsBlobNameAgreesWithParse(t *testing.T) {
	d := sha256.Sum256([]byte("cat"))
	h := hex.EncodeToString(d[:])
	for _, p := range []string{
		h, h + ".png", "/srv/a/.forge/files/inbound/" + h + ".png", "inbound/" + h + ".jpeg",
		h + ".PNG", strings.ToUpper(h), h[:63] + ".png", h + "0.png", h + ".tar.gz", h + ".", "x/" + h + "/", "",
		"/" + h[:10] + "g" + h[11:] + ".png", h + ".abcdefghi", "a b/" + h + ".final copy",
	} {
		_, want := blobname.Parse(p)
		if got := isBlobName(p); got != want {
			t.Errorf("isBlobName(%q) = %v, blobname.Parse says %v", p, got, want)
		}
	}
}

// isCleanAbs holds exactly when path.Clean leaves an absolute path as it is.
func TestIsCleanAbsAgreesWithClean(t *testing.T) {
	for _, p := range []string{
		"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..", "/.", "/..", "/./a",
		"/srv/agent/.forge/files/inbound/x.png", "/a/.b/..c/...d/e.", "/a/b.", "/a/.b/", "/a/b/..", "a/b", "",
		"/home/u/My Agent/.coffer/channel-media/x.final copy", "/a/.../b", "/a/..b/c", "/..a", "/a/b/.",
	} {
		want := len(p) > 0 && p[0] == '/' && path.Clean(p) == p
		if got := isCleanAbs(p); got != want {
			t.Errorf("isCleanAbs(%q) = %v, want %v", p, got, want)
		}
		if len(p) > 0 && p[0] == '/' && cleanAbs(p) != path.Clean(p) {
			t.Errorf("cleanAbs(%q) = %q, path.Clean says %q", p, cleanAbs(p), path.Clean(p))
		}
	}
}

func FuzzIsCleanAbs(f *testing.F) {
	for _, p := range []string{"/a/./b", "/srv/.forge/x", "/a/..", "//"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if p == "" || p[0] != '/' {
			return
		}
		if got, want := isCleanAbs(p), path.Clean(p) == p; got != want {
			t.Errorf("isCleanAbs(%q) = %v, want %v", p, got, want)
		}
	})
}

// BenchmarkResolveAbsPath resolves the absolute path of a flat
// content-addressed name inside a local store: the per-reference resolution
// of a forge session.
func BenchmarkResolveAbsPath(b *testing.B) {
	d := sha256.Sum256([]byte("bench"))
	p := "/srv/agent/.forge/files/inbound/" + hex.EncodeToString(d[:]) + ".png"
	r := NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"})
	ref := Reference{Raw: p, Kind: AbsPath, Path: p}
	b.ReportAllocs()
	for b.Loop() {
		if st, _ := r.Resolve(ref); st != Inside {
			b.Fatal(st)
		}
	}
}

// FuzzIsBlobName: isBlobName answers as blobname.Parse does on any path.
func FuzzIsBlobName(f *testing.F) {
	d := sha256.Sum256([]byte("cat"))
	h := hex.EncodeToString(d[:])
	for _, p := range []string{h + ".png", "/a/" + h + ".jpeg//", "x" + h + ".png", "/" + h + ".abcdefghi", h[:63] + "G.png", "a/b"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if _, want := blobname.Parse(p); isBlobName(p) != want {
			t.Fatalf("isBlobName(%q) = %v, blobname.Parse says %v", p, !want, want)
		}
	})
}
