package ref

import "testing"

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
