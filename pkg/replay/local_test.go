package replay_test

import (
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestMetadataKey pins the metadata key to the one migrate writes.
func TestMetadataKey(t *testing.T) {
	if replay.MetadataKey != migrate.MetadataKey {
		t.Fatalf("replay.MetadataKey = %q, migrate writes %q", replay.MetadataKey, migrate.MetadataKey)
	}
}

// TestLocalForms reads one forge blob through every form a session writes it
// in: absolute path, file URIs (three slashes, localhost, file:/, escaped),
// and a path relative to the working directory, with absolute and relative
// roots, and a root reached through a symbolic link.
func TestLocalForms(t *testing.T) {
	work := filepath.Join(t.TempDir(), "My Agent")
	blob := pngBlob(3000)
	files, paths := forgeFiles(t, work, blob)
	p := paths[0]
	name := filepath.Base(p)
	forms := []string{
		p,
		"file://" + p,
		"file://localhost" + p,
		"file://LOCALHOST" + p,
		"file:" + p,
		(&url.URL{Scheme: "file", Path: p}).String(), // My%20Agent
		"file://" + strings.ReplaceAll(filepath.Dir(p), " ", "%20") + "%2F" + name,
		filepath.Dir(p) + "/./" + name,
		filepath.Dir(p) + "//" + name,
	}
	r := newReplayer(t, replay.Config{Roots: []string{files}})
	for _, ref := range forms {
		info := wantBytes(t, r, ref, blob)
		if info.Source != replay.FromLocal || info.Location != p || info.Size != int64(len(blob)) || info.ContentType != "image/png" {
			t.Errorf("Open(%q) info = %+v, want local %s, %d bytes, image/png", ref, info, p, len(blob))
		}
	}

	t.Chdir(work)
	rel := newReplayer(t, replay.Config{Roots: []string{".forge/files"}})
	for _, ref := range append(forms, ".forge/files/inbound/"+name, "./.forge/files/inbound/"+name) {
		wantBytes(t, rel, ref, blob)
	}
	// A path outside, relative or not, stays outside.
	_, _, err := readRef(t, rel, ".forge/sessions/x.png")
	wantRefused(t, ".forge/sessions/x.png", err, replay.ErrOutsideRoots)

	// A root given through a link serves paths under either name.
	link := filepath.Join(t.TempDir(), "files-link")
	if err := os.Symlink(files, link); err != nil {
		t.Fatal(err)
	}
	viaLink := newReplayer(t, replay.Config{Roots: []string{link}})
	wantBytes(t, viaLink, filepath.Join(link, "inbound", name), blob)
	wantBytes(t, viaLink, p, blob)
}

// TestLocalRefused: escapes, other hosts, other schemes and the internal
// folder are refused before anything is opened.
func TestLocalRefused(t *testing.T) {
	base := t.TempDir()
	blob := pngBlob(100)
	files, paths := forgeFiles(t, filepath.Join(base, "work"), blob)
	name := filepath.Base(paths[0])
	secret := filepath.Join(base, "secret")
	os.MkdirAll(secret, 0o700)
	os.WriteFile(filepath.Join(secret, name), blob, 0o600)
	os.MkdirAll(files+"-evil/inbound", 0o700)
	os.WriteFile(files+"-evil/inbound/"+name, blob, 0o600)
	os.MkdirAll(filepath.Join(files, ".mediactl", "trash"), 0o700)
	os.WriteFile(filepath.Join(files, ".mediactl", "trash", name), blob, 0o600)
	os.MkdirAll(filepath.Join(files, "inbound", ".mediactl", "trash", "run"), 0o700)
	os.WriteFile(filepath.Join(files, "inbound", ".mediactl", "trash", "run", name), blob, 0o600)

	r := newReplayer(t, replay.Config{Roots: []string{files}})
	for _, c := range []struct {
		ref  string
		want error
	}{
		{filepath.Join(secret, name), replay.ErrOutsideRoots},
		{files + "-evil/inbound/" + name, replay.ErrOutsideRoots},
		{"/etc/passwd", replay.ErrOutsideRoots},
		{"../secret/" + name, replay.ErrInvalidReference},
		{files + "/inbound/../../../secret/" + name, replay.ErrInvalidReference},
		{files + "/inbound/../inbound/" + name, replay.ErrInvalidReference},
		{"file://" + files + "/inbound/..%2F..%2F..%2Fsecret%2F" + name, replay.ErrInvalidReference},
		{"file://" + files + "/inbound/%2E%2E/%2e%2e/../secret/" + name, replay.ErrInvalidReference},
		{"file://otherhost" + paths[0], replay.ErrInvalidReference},
		{"file:inbound/" + name, replay.ErrInvalidReference},
		{"file://" + paths[0] + "?x=1", replay.ErrInvalidReference},
		{"http://localhost" + paths[0], replay.ErrInvalidReference},
		{files + "\\inbound\\" + name, replay.ErrInvalidReference},
		{paths[0] + "\x00", replay.ErrInvalidReference},
		{"", replay.ErrInvalidReference},
		{files, replay.ErrOutsideRoots},
		{filepath.Join(files, ".mediactl", "trash", name), replay.ErrInvalidReference},
		{filepath.Join(files, "inbound", ".mediactl", "trash", "run", name), replay.ErrInvalidReference},
	} {
		rc, _, err := r.Open(ctx, c.ref)
		if err == nil {
			rc.Close()
		}
		wantRefused(t, c.ref, err, c.want)
	}
	if _, _, err := readRef(t, r, filepath.Join(files, "inbound", sum([]byte("x"))+".png")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing blob = %v, want ErrNotExist", err)
	}
}

// TestLocalSymlinks: a link in a root — to a file or folder outside, or
// inside — is never followed, and an attacker who keeps swapping the inbound
// folder for a link to a victim folder never gets the victim's file read.
func TestLocalSymlinks(t *testing.T) {
	base := t.TempDir()
	blob := pngBlob(5000)
	files, paths := forgeFiles(t, filepath.Join(base, "work"), blob)
	victim := filepath.Join(base, "victim")
	os.MkdirAll(victim, 0o700)
	secret := pngBlob(5000)
	secretName := sum(secret) + ".png"
	os.WriteFile(filepath.Join(victim, secretName), secret, 0o600)

	os.Symlink(filepath.Join(victim, secretName), filepath.Join(files, "inbound", secretName))
	os.Symlink(victim, filepath.Join(files, "generated"))
	os.Symlink(paths[0], filepath.Join(files, "inbound", sum(blob)+".jpg"))
	os.Mkdir(filepath.Join(files, "inbound", "d.png"), 0o700)

	r := newReplayer(t, replay.Config{Roots: []string{files}, AllowUnverifiedLocal: true})
	for _, ref := range []string{
		filepath.Join(files, "inbound", secretName),
		filepath.Join(files, "generated", secretName),
		"file://" + filepath.Join(files, "generated", secretName),
		filepath.Join(files, "inbound", sum(blob)+".jpg"),
		filepath.Join(files, "inbound", "d.png"),
	} {
		_, _, err := readRef(t, r, ref)
		wantRefused(t, ref, err, replay.ErrNotRegular)
	}
	os.Remove(filepath.Join(files, "inbound", secretName))

	// The race: inbound is a link to the victim folder from time to time.
	stop := storetest.SwapFolders(t, []string{filepath.Join(files, "inbound")}, victim, 2*time.Second, 1<<30)
	var leaked, served, refused atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			deadline := time.Now().Add(time.Second)
			for time.Now().Before(deadline) {
				if got, _, err := readRef(t, r, filepath.Join(files, "inbound", secretName)); err == nil || len(got) > 0 {
					leaked.Add(1)
				}
				got, _, err := readRef(t, r, paths[0])
				switch {
				case err == nil && string(got) == string(blob):
					served.Add(1)
				case err == nil:
					leaked.Add(1)
				default:
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	swaps := stop()
	if leaked.Load() != 0 {
		t.Fatalf("%d reads through the swapped link returned bytes", leaked.Load())
	}
	if swaps == 0 || served.Load() == 0 {
		t.Fatalf("the race did not run: %d swaps, %d reads served, %d refused", swaps, served.Load(), refused.Load())
	}
	t.Logf("%d swaps; %d reads of the real blob served, %d refused while swapped, none of the victim", swaps, served.Load(), refused.Load())
}

// TestLocalVerified: a content-addressed file whose bytes changed, or that was
// cut short, fails at its end, never with io.EOF; a file with an opaque name
// is refused unless unverified local reads are allowed.
func TestLocalVerified(t *testing.T) {
	blob := pngBlob(70000)
	files, paths := forgeFiles(t, t.TempDir(), blob, pngBlob(100))
	altered := append([]byte(nil), blob...)
	altered[40000] ^= 1
	os.WriteFile(paths[0], altered, 0o600)
	os.Truncate(paths[1], 50)

	r := newReplayer(t, replay.Config{Roots: []string{files}})
	wantMismatch(t, r, paths[0])
	wantMismatch(t, r, paths[1])

	rc, _, err := r.Open(ctx, paths[0])
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	var readErr error
	for readErr == nil {
		_, readErr = rc.Read(buf)
	}
	if readErr == io.EOF {
		t.Error("Read returned io.EOF at the end of altered bytes")
	}
	if _, err := rc.Read(buf); !errors.Is(err, replay.ErrDigestMismatch) {
		t.Errorf("a Read after the mismatch = %v, want the mismatch again", err)
	}
	rc.Close()

	// coffer's attachments: random names, no digest anywhere.
	coffer := t.TempDir()
	att := filepath.Join(coffer, "channel-media", "3f0c1b2e9d8a4c7b8e6f5a4b3c2d1e0f.jpg")
	os.MkdirAll(filepath.Dir(att), 0o700)
	os.WriteFile(att, []byte("\xff\xd8\xff photo"), 0o600)
	strict := newReplayer(t, replay.Config{Roots: []string{coffer}})
	_, _, err = readRef(t, strict, att)
	wantRefused(t, att, err, replay.ErrNoDigest)
	lenient := newReplayer(t, replay.Config{Roots: []string{coffer}, AllowUnverifiedLocal: true})
	got, info, err := readRef(t, lenient, att)
	if err != nil || string(got) != "\xff\xd8\xff photo" || info.Verified || info.SHA256 != "" || info.ContentType != "image/jpeg" {
		t.Errorf("unverified read = %q, %+v, %v; want the bytes, Verified false", got, info, err)
	}
}
