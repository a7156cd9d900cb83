package replay_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestMountAndStat: a bucket mounted on the replaying pods (Bucket.Mount) is
// read by the paths the pods see, through the bucket's API, on a host
// without the mount; Stat says what Open would serve without reading it, and
// refuses what Open refuses.
func TestMountAndStat(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	u := srv.Bucket(t, "mounted")
	s := openStore(t, u)
	blob := pngBlob(3000)
	key := "inbound/" + sum(blob) + ".png"
	putObject(t, s, key, blob, blob)
	opaque := pngBlob(1000)
	putObject(t, s, "inbound/photo.png", opaque, opaque)
	lying := pngBlob(1000)
	putObject(t, s, "inbound/"+sum(lying)+".png", lying, opaque) // the metadata names other bytes
	putObject(t, s, "private/"+sum(blob)+".png", blob, blob)

	mount := filepath.Join(t.TempDir(), "pod", ".forge", "files", "remote") // not there on this host
	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}, Mount: mount}}})
	p := filepath.Join(mount, "inbound", sum(blob)+".png")
	info := wantBytes(t, r, p, blob)
	if info.Source != replay.FromBucket || info.Location != "s3://"+bucketName(t, u)+"/"+key {
		t.Errorf("Open(%s): %+v", p, info)
	}
	wantBytes(t, r, "file://"+p, blob)

	st, err := r.Stat(ctx, p)
	if err != nil || st.SHA256 != sum(blob) || st.Size != int64(len(blob)) || st.Location != info.Location || st.ContentType != "image/png" {
		t.Errorf("Stat(%s) = %+v, %v", p, st, err)
	}
	if st, err := r.Stat(ctx, filepath.Join(mount, "inbound", "photo.png")); err != nil || st.SHA256 != sum(opaque) {
		t.Errorf("Stat of an opaque name = %+v, %v; want the metadata's sha256", st, err)
	}
	if _, err := r.Stat(ctx, filepath.Join(mount, "inbound", sum(lying)+".png")); !errors.Is(err, replay.ErrDigestMismatch) {
		t.Errorf("Stat of an object whose name and metadata disagree = %v, want ErrDigestMismatch", err)
	}
	if _, err := r.Stat(ctx, filepath.Join(mount, "inbound", sum(opaque)+".png")); err == nil {
		t.Error("Stat of a missing object succeeded")
	}
	for _, c := range []struct {
		ref  string
		want error
	}{
		{filepath.Join(mount, "private", sum(blob)+".png"), replay.ErrPrefixNotAllowed},
		{mount + "/inbound/../private/" + sum(blob) + ".png", replay.ErrInvalidReference},
		{filepath.Join(filepath.Dir(mount), "inbound", sum(blob)+".png"), replay.ErrOutsideRoots},
		{filepath.Join(mount, ".mediactl", "lock"), replay.ErrInvalidReference},
	} {
		_, err := r.Stat(ctx, c.ref)
		wantRefused(t, c.ref, err, c.want)
		rc, _, err := r.Open(ctx, c.ref)
		if err == nil {
			rc.Close()
		}
		wantRefused(t, c.ref, err, c.want)
	}
	// The sessions call the bucket by another name (Bucket.Names): pairs
	// and URLs by that name read it; by a third name they are refused.
	named := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}, Names: []string{"agent-runs"}}}})
	rc, info, err := named.OpenObject(ctx, "agent-runs", key)
	if err != nil {
		t.Fatalf("OpenObject by the other name: %v", err)
	}
	rc.Close()
	if info.Location != "s3://"+bucketName(t, u)+"/"+key {
		t.Errorf("OpenObject by the other name: %+v", info)
	}
	wantBytes(t, named, "s3://agent-runs/"+key, blob)
	_, _, err = named.OpenObject(ctx, "third", key)
	wantRefused(t, "third/"+key, err, replay.ErrBucketNotAllowed)

	if _, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: u, Mount: "relative/dir"}}}); err == nil {
		t.Error("a relative mount was accepted")
	}
}
