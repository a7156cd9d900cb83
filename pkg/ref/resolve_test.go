package ref

import (
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

func TestResolveLocal(t *testing.T) {
	r := NewLocalResolver("/srv/agent/.forge/files/inbound", []string{"/data/agent/.forge/files/inbound"}, []string{"/srv/agent"})
	cases := []struct {
		ref  Reference
		st   Status
		key  string
		name string
	}{
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/a.png"}, Inside, "a.png", "absolute"},
		{Reference{Kind: AbsPath, Path: "/data/agent/.forge/files/inbound/a.png"}, Inside, "a.png", "alias of the store dir"},
		{Reference{Kind: FileURI, Path: "/srv/agent/.forge/files/inbound/sub/a.png"}, Inside, "sub/a.png", "file uri, nested"},
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/../../../etc/passwd"}, Outside, "", "traversal"},
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/x/../../inbound/a.png"}, Inside, "a.png", "traversal that comes back in"},
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound2/a.png"}, Outside, "", "sibling with a common prefix"},
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound"}, Outside, "", "the store dir itself"},
		{Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/.mediactl/trash/a.png"}, Outside, "", "internal folder"},
		{Reference{Kind: RelPath, Path: ".forge/files/inbound/a.png"}, Inside, "a.png", "relative to the base"},
		{Reference{Kind: RelPath, Path: "files/inbound/a.png"}, Inside, "a.png", "store dir suffix"},
		{Reference{Kind: RelPath, Path: "./a.png"}, Inside, "a.png", "dot slash"},
		{Reference{Kind: RelPath, Path: "a.png"}, Inside, "a.png", "bare name"},
		{Reference{Kind: RelPath, Path: "../../etc/a.png"}, Outside, "", "relative escape"},
		{Reference{Kind: RelPath, Path: "docs/a.png"}, Unanchored, "", "unrelated relative path"},
		{Reference{Kind: BucketURL, Scheme: "s3", Bucket: "b", Path: "k"}, Elsewhere, "", "bucket url on a local store"},
	}
	for _, c := range cases {
		st, key := r.Resolve(c.ref)
		if st != c.st || key != c.key {
			t.Errorf("%s: Resolve(%s) = %v %q, want %v %q", c.name, c.ref.Path, st, key, c.st, c.key)
		}
	}
}

func TestResolveBucket(t *testing.T) {
	r := NewBucketResolver("s3", "media", "agent-inputs/")
	cases := []struct {
		ref  Reference
		st   Status
		key  string
		name string
	}{
		{Reference{Kind: BucketURL, Scheme: "s3", Bucket: "media", Path: "agent-inputs/u/t/f.png"}, Inside, "u/t/f.png", "url"},
		{Reference{Kind: BucketPair, Bucket: "media", Path: "agent-inputs/u/t/f.png"}, Inside, "u/t/f.png", "pair"},
		{Reference{Kind: BucketPair, Bucket: "media", Path: "other/f.png"}, Outside, "", "same bucket, outside the prefix"},
		{Reference{Kind: BucketPair, Bucket: "media", Path: "agent-inputs/../other/f.png"}, Outside, "", "traversal in a key"},
		{Reference{Kind: BucketURL, Scheme: "gs", Bucket: "media", Path: "agent-inputs/f.png"}, Elsewhere, "", "other scheme"},
		{Reference{Kind: BucketPair, Bucket: "else", Path: "agent-inputs/f.png"}, Elsewhere, "", "other bucket"},
		{Reference{Kind: AbsPath, Path: "/srv/x.png"}, Elsewhere, "", "local path"},
		{Reference{Kind: RelPath, Path: "agent-inputs/u/f.png"}, Inside, "u/f.png", "relative key with the prefix"},
	}
	for _, c := range cases {
		st, key := r.Resolve(c.ref)
		if st != c.st || key != c.key {
			t.Errorf("%s: Resolve(%s) = %v %q, want %v %q", c.name, c.ref.Path, st, key, c.st, c.key)
		}
	}
}

// A bucket the sessions call by another name (AlsoNamed), and a file://
// bucket, whose objects are the files below its folder.
func TestResolveBucketNamesAndFolders(t *testing.T) {
	r := NewBucketResolver("s3", "media-eu-1", "agent-inputs/").AlsoNamed("agent-runs")
	fb := NewBucketResolver("file", "/srv/buckets/agent-runs", "").AlsoNamed("agent-runs")
	cases := []struct {
		r    *Resolver
		ref  Reference
		st   Status
		key  string
		name string
	}{
		{r, Reference{Kind: BucketPair, Bucket: "agent-runs", Path: "agent-inputs/u/t/f.png"}, Inside, "u/t/f.png", "pair by the other name"},
		{r, Reference{Kind: BucketURL, Scheme: "s3", Bucket: "agent-runs", Path: "agent-inputs/u/t/f.png"}, Inside, "u/t/f.png", "url by the other name"},
		{r, Reference{Kind: BucketPair, Bucket: "media-eu-1", Path: "agent-inputs/u/t/f.png"}, Inside, "u/t/f.png", "pair by its own name"},
		{r, Reference{Kind: BucketURL, Scheme: "gs", Bucket: "agent-runs", Path: "agent-inputs/f.png"}, Elsewhere, "", "other scheme"},
		{r, Reference{Kind: BucketPair, Bucket: "agent-runs", Path: "other/f.png"}, Outside, "", "other prefix"},
		{r, Reference{Kind: AbsPath, Path: "/srv/buckets/agent-runs/f.png"}, Elsewhere, "", "a path is no s3 object"},
		{fb, Reference{Kind: BucketPair, Bucket: "agent-runs", Path: "u/f.png"}, Inside, "u/f.png", "file bucket pair"},
		{fb, Reference{Kind: AbsPath, Path: "/srv/buckets/agent-runs/u/f.png"}, Inside, "u/f.png", "file bucket path"},
		{fb, Reference{Kind: FileURI, Path: "/srv/buckets/agent-runs/u/f.png"}, Inside, "u/f.png", "file bucket URI"},
		{fb, Reference{Kind: AbsPath, Path: "/srv/buckets/agent-runs/../x/f.png"}, Elsewhere, "", "traversal out of the folder"},
		{fb, Reference{Kind: AbsPath, Path: "/srv/buckets/agent-runs-2/f.png"}, Elsewhere, "", "a sibling folder"},
	}
	for _, c := range cases {
		st, key := c.r.Resolve(c.ref)
		if st != c.st || key != c.key {
			t.Errorf("%s: Resolve(%s) = %v %q, want %v %q", c.name, c.ref.Path, st, key, c.st, c.key)
		}
	}
	if l := NewLocalResolver("/srv/x", nil, nil); l.AlsoNamed("agent-runs") != l {
		t.Error("AlsoNamed changed a local resolver")
	}
}

func TestResolveNotAKey(t *testing.T) {
	r := NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"})
	long := strings.Repeat("a", 256) + ".png"
	for _, p := range []Reference{
		{Kind: RelPath, Path: `C:\Users\x.png`},
		{Kind: RelPath, Path: `.forge\files\inbound\a.png`},
		{Kind: AbsPath, Path: `/srv/agent/.forge/files/inbound/a\b.png`},
		{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/a\x00.png"},
		{Kind: FileURI, Path: "/srv/agent/.forge/files/inbound/" + long},
		{Kind: RelPath, Path: long},
		{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/" + strings.Repeat("d/", 2100) + "a.png"},
	} {
		if st, key := r.Resolve(p); st != Elsewhere {
			t.Errorf("Resolve(%q) = %v %q, want elsewhere", p.Path, st, key)
		}
	}
	b := NewBucketResolver("s3", "media", "")
	if st, _ := b.Resolve(Reference{Kind: BucketURL, Scheme: "s3", Bucket: "media", Path: `a\b.png`}); st != Elsewhere {
		t.Errorf("bucket key with a backslash: %v, want elsewhere", st)
	}
}

func TestResolveLayoutRules(t *testing.T) {
	// forge: two stores under the runtime's own folder, work/ relative to its parent.
	inbound := NewLocal(Local{
		Dir:     "/srv/My Agent & Co/work/.forge/files/inbound",
		Bases:   []string{"/srv/My Agent & Co/work", "/srv/My Agent & Co"},
		Runtime: []string{"/srv/My Agent & Co/work/.forge/files"},
		Others:  []string{"/srv/My Agent & Co/work/.forge/files/generated"},
	})
	// coffer after its upgrade: channel-media moved, the rows still name it.
	channel := NewLocal(Local{
		Dir:     "/home/u/.coffer/content/channel-media",
		Aliases: []string{"/home/u/.coffer/channel-media"},
		Bases:   []string{"/home/u/.coffer"},
		Home:    "/home/u",
	})
	noHome := NewLocal(Local{Dir: "/home/u/.coffer/channel-media"})
	cases := []struct {
		r    *Resolver
		ref  Reference
		st   Status
		key  string
		name string
	}{
		{inbound, Reference{Kind: AbsPath, Path: "/srv/My Agent & Co/work/.forge/files/inbound/a.png"}, Inside, "a.png", "absolute, space and &"},
		{inbound, Reference{Kind: RelPath, Path: ".forge/files/inbound/a.png"}, Inside, "a.png", ".forge/ relative"},
		{inbound, Reference{Kind: RelPath, Path: "work/.forge/files/inbound/a.png"}, Inside, "a.png", "work/ relative to the parent"},
		{inbound, Reference{Kind: AbsPath, Path: "/srv/My Agent & Co/work/.forge/files/report-3.md"}, Runtime, "", "forge's own file"},
		{inbound, Reference{Kind: RelPath, Path: ".forge/files/screenshot-1.png"}, Runtime, "", "forge's own file, relative"},
		{inbound, Reference{Kind: RelPath, Path: "work/.forge/files/report-41.md"}, Runtime, "", "forge's own file, work/ relative"},
		{inbound, Reference{Kind: AbsPath, Path: "/srv/My Agent & Co/work/.forge/files/generated/b.png"}, Outside, "", "the other store"},
		{inbound, Reference{Kind: AbsPath, Path: "/srv/My Agent & Co/work/.forge/files/inbound/../../../x"}, Outside, "", "traversal out of the runtime"},
		{inbound, Reference{Kind: AbsPath, Path: "/srv/My Agent & Co/work/.forge/files/inbound/.mediactl/trash/a.png"}, Outside, "", "internal folder"},
		{inbound, Reference{Kind: RelPath, Path: "~/a.png"}, Unanchored, "", "~/ without a home"},
		{channel, Reference{Kind: AbsPath, Path: "/home/u/.coffer/channel-media/x.jpg"}, Inside, "x.jpg", "pre-upgrade path"},
		{channel, Reference{Kind: AbsPath, Path: "/home/u/.coffer/content/channel-media/x.jpg"}, Inside, "x.jpg", "upgraded path"},
		{channel, Reference{Kind: FileURI, Path: "/home/u/.coffer/channel-media/x y.final copy"}, Inside, "x y.final copy", "file uri, space"},
		{channel, Reference{Kind: RelPath, Path: "~/.coffer/channel-media/x.JPG"}, Inside, "x.JPG", "~/ with the home"},
		{channel, Reference{Kind: RelPath, Path: "~/../../etc/passwd"}, Outside, "", "~/ traversal"},
		{channel, Reference{Kind: RelPath, Path: "~/.coffer/channel-media/../coffer.db"}, Outside, "", "~/ out of the store"},
		{channel, Reference{Kind: RelPath, Path: "channel-media/x.jpg"}, Inside, "x.jpg", "relative to .coffer, pre-upgrade"},
		{channel, Reference{Kind: AbsPath, Path: "/home/u/.coffer/workspace/x.jpg"}, Outside, "", "no runtime folder for coffer"},
		{noHome, Reference{Kind: RelPath, Path: "~/.coffer/channel-media/x.JPG"}, Unanchored, "", "~/ without a home, even with a matching suffix"},
		{noHome, Reference{Kind: RelPath, Path: "~"}, Unanchored, "", "~ alone"},
	}
	for _, c := range cases {
		st, key := c.r.Resolve(c.ref)
		if st != c.st || key != c.key {
			t.Errorf("%s: Resolve(%s) = %v %q, want %v %q", c.name, c.ref.Path, st, key, c.st, c.key)
		}
	}
}

// FuzzResolve: whatever a reference says, Inside comes with a valid key of the
// store, and nothing resolves into the internal folder.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.png", "~/.coffer/channel-media/x", "../x", `C:\x`, ".forge/files/report-1.md", "/srv/w/.forge/files/inbound/a\x00"} {
		f.Add(uint8(AbsPath), s)
		f.Add(uint8(RelPath), s)
	}
	r := NewLocal(Local{
		Dir: "/srv/w/.forge/files/inbound", Aliases: []string{"/old/inbound"},
		Bases: []string{"/srv/w", "/srv"}, Home: "/srv", Runtime: []string{"/srv/w/.forge/files"},
	})
	f.Fuzz(func(t *testing.T, kind uint8, p string) {
		st, key := r.Resolve(Reference{Kind: Kind(kind%5 + 1), Path: p, Bucket: "b"})
		if st == Inside {
			if err := store.ValidKey(key); err != nil {
				t.Fatalf("Resolve(%q) = inside %q: %v", p, key, err)
			}
		} else if key != "" {
			t.Fatalf("Resolve(%q) = %v with key %q", p, st, key)
		}
	})
}

// BenchmarkResolve: one absolute forge reference against the two stores of a
// forge layout, as scan does for every reference.
func BenchmarkResolve(b *testing.B) {
	in := NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"})
	gen := NewLocalResolver("/srv/agent/.forge/files/generated", nil, []string{"/srv/agent"})
	r := Reference{Kind: AbsPath, Path: "/srv/agent/.forge/files/inbound/0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f.png"}
	b.ReportAllocs()
	for b.Loop() {
		in.Resolve(r)
		gen.Resolve(r)
	}
}

// The bucket URL schemes references can use are the store's bucket-naming
// schemes, no more and no less.
func TestBucketSchemesAreTheStores(t *testing.T) {
	for _, s := range bucketSchemes {
		if !store.NamesBucket(s) {
			t.Errorf("reference scheme %s:// is not a bucket-naming scheme of the store", s)
		}
	}
	for _, s := range store.SupportedSchemes {
		if store.NamesBucket(s) != slices.Contains(bucketSchemes, s) {
			t.Errorf("store scheme %s:// names a bucket: %v; references know it: %v", s, store.NamesBucket(s), slices.Contains(bucketSchemes, s))
		}
	}
}
