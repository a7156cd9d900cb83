// Package realworld unpacks, for tests, the stores that the real forge and
// coffer code wrote (their own serializers, file names, modes and atomic-write
// habits), together with the ground truth their generator computed.
//
// The archives and truths in testdata/ are copies of the ones the stores were
// published with; they hold the placeholder /__ROOT__ where the generating
// machine had its root. Unpacking does what that publication's install.sh does:
// put the real root where the placeholder is (in session files, in the files
// forge's tools write in .forge/files, and in coffer's SQLite rows), and move
// every mtime forward by the time elapsed since generation, so that age-based
// sets in the truth ("older than 24 h", "30 days") still hold. The root is
// written the way each runtime would have written it: Go's json.Marshal with
// HTML escapes for forge (so a root with "&" appears as \u0026), Python's
// json.dumps with ensure_ascii for coffer.
package realworld

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/retain/retaintest" // registers the "sqlite" database/sql driver
)

// Placeholder is what the archives hold where the generating machine's root was.
const Placeholder = "/__ROOT__"

var (
	//go:embed testdata/forge.tar.gz
	forgeArchive []byte
	//go:embed testdata/forge-truth.json
	forgeTruth []byte
	//go:embed testdata/coffer.tar.gz
	cofferArchive []byte
	//go:embed testdata/coffer-truth.json
	cofferTruth []byte
)

// Forge unpacks the forge store into a fresh temporary directory and returns
// the runtime's root (the directory that holds .forge/) and the truth, with
// /__ROOT__ replaced by that root in every string and member name.
func Forge(t testing.TB) (root string, truth map[string]any) {
	t.Helper()
	return ForgeIn(t, t.TempDir())
}

// ForgeIn is Forge with the archive unpacked in parent (created if needed), so
// the root is parent/work: a test can place the root under a directory whose
// name has spaces, "&" or non-ASCII letters.
func ForgeIn(t testing.TB, parent string) (root string, truth map[string]any) {
	t.Helper()
	root, truth, err := installForge(parent)
	if err != nil {
		t.Fatalf("realworld: forge store: %v", err)
	}
	return root, truth
}

// Coffer unpacks the pre-upgrade coffer home into a fresh temporary directory
// and returns the home (the directory that holds .coffer/) and the truth, with
// /__ROOT__ replaced by the home.
func Coffer(t testing.TB) (home string, truth map[string]any) {
	t.Helper()
	home, truth, err := installCoffer(t.TempDir())
	if err != nil {
		t.Fatalf("realworld: coffer home: %v", err)
	}
	return home, truth
}

// CofferIn is Coffer with the archive unpacked in parent (created if needed),
// so the home is parent/home-legacy.
func CofferIn(t testing.TB, parent string) (home string, truth map[string]any) {
	t.Helper()
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	home, truth, err := installCoffer(parent)
	if err != nil {
		t.Fatalf("realworld: coffer home: %v", err)
	}
	return home, truth
}

// InstallForge is ForgeIn for a program that is not a test (bench/overkeep):
// it unpacks the forge store into parent and returns the root and the truth,
// or the error.
func InstallForge(parent string) (root string, truth map[string]any, err error) {
	return installForge(parent)
}

// InstallCoffer is CofferIn for a program that is not a test: the home (parent
// is created if needed) and the truth, or the error.
func InstallCoffer(parent string) (home string, truth map[string]any, err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	return installCoffer(parent)
}

func installForge(parent string) (string, map[string]any, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	parent, err := filepath.Abs(parent)
	if err != nil {
		return "", nil, err
	}
	truth, shift, err := loadTruth(forgeTruth)
	if err != nil {
		return "", nil, err
	}
	root := filepath.Join(parent, "work")
	if err := checkRoot(root); err != nil {
		return "", nil, err
	}
	files, err := unpack(forgeArchive, parent)
	if err != nil {
		return "", nil, err
	}
	// Session files are Go JSON: the root is a string's content, with HTML escapes.
	// One session names the root inside JSON embedded in a string, with escaped
	// slashes: \\/__ROOT__ in the raw bytes.
	sessPlain := []byte(goJSONContent(root))
	sessEsc := []byte(goJSONContent(strings.ReplaceAll(root, "/", `\/`)))
	// The files forge's tools write in .forge/files are not JSON: install.sh's rule.
	rawPlain := []byte(root)
	rawEsc := []byte(strings.ReplaceAll(root, "/", `\\/`))
	sessDir := filepath.Join(root, ".forge", "sessions")
	filesDir := filepath.Join(root, ".forge", "files")
	for _, f := range files {
		if !f.regular {
			continue
		}
		switch filepath.Dir(f.path) {
		case sessDir:
			err = substitute(f.path, sessEsc, sessPlain)
		case filesDir:
			err = substitute(f.path, rawEsc, rawPlain)
		}
		if err != nil {
			return "", nil, err
		}
	}
	if err := shiftTimes(files, shift); err != nil {
		return "", nil, err
	}
	return root, replaceRoot(truth, root).(map[string]any), nil
}

func installCoffer(parent string) (string, map[string]any, error) {
	parent, err := filepath.Abs(parent)
	if err != nil {
		return "", nil, err
	}
	truth, shift, err := loadTruth(cofferTruth)
	if err != nil {
		return "", nil, err
	}
	home := filepath.Join(parent, "home-legacy")
	if err := checkRoot(home); err != nil {
		return "", nil, err
	}
	files, err := unpack(cofferArchive, parent)
	if err != nil {
		return "", nil, err
	}
	db := filepath.Join(home, ".coffer", "coffer.db")
	if err := substituteRows(db, pyJSONContent(home)); err != nil {
		return "", nil, fmt.Errorf("%s: %w", db, err)
	}
	if err := shiftTimes(files, shift); err != nil {
		return "", nil, err
	}
	return home, replaceRoot(truth, home).(map[string]any), nil
}

// checkRoot refuses a root the substitution could not write faithfully.
func checkRoot(root string) error {
	if strings.ContainsAny(root, "\"\\\x00\n\r\t") {
		return fmt.Errorf("root %q: quotes, backslashes and control characters are not supported", root)
	}
	return nil
}

// loadTruth decodes a truth and returns how far its mtimes must move forward.
func loadTruth(raw []byte) (map[string]any, time.Duration, error) {
	var truth map[string]any
	if err := json.Unmarshal(raw, &truth); err != nil {
		return nil, 0, fmt.Errorf("truth: %w", err)
	}
	gen, _ := truth["generated_at"].(string)
	at, err := time.Parse(time.RFC3339Nano, gen)
	if err != nil {
		return nil, 0, fmt.Errorf("truth generated_at %q: %w", gen, err)
	}
	return truth, time.Since(at), nil
}

// unpacked is one file or directory written by unpack, with its archived times.
type unpacked struct {
	path           string
	regular        bool
	mtime, atime   time.Time
	hasAccessTimes bool
}

// unpack writes the gzip'd tar archive under dest, keeping the archived modes,
// and returns what it wrote. Entries that would land outside dest are refused.
func unpack(archive []byte, dest string) ([]unpacked, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []unpacked
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("archive entry %q leaves the destination", h.Name)
		}
		p := filepath.Join(dest, name)
		u := unpacked{path: p, mtime: h.ModTime, atime: h.AccessTime, hasAccessTimes: !h.AccessTime.IsZero()}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, err
			}
			// Modes are set once the directory's files are in (a 0500 folder
			// would refuse them).
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if err := os.Chmod(p, h.FileInfo().Mode().Perm()); err != nil {
				return nil, err
			}
			u.regular = true
		default:
			return nil, fmt.Errorf("archive entry %q: unexpected type %q", h.Name, h.Typeflag)
		}
		out = append(out, u)
		if h.Typeflag == tar.TypeDir {
			defer os.Chmod(p, h.FileInfo().Mode().Perm())
		}
	}
	return out, nil
}

// shiftTimes moves every regular file's times forward by shift, as install.sh
// does (a file never archived with an access time gets now + shift, which is
// what extracting it and then shifting gives). Directories keep the time of
// the unpacking: install.sh does not touch them either.
func shiftTimes(files []unpacked, shift time.Duration) error {
	now := time.Now()
	for _, f := range files {
		if !f.regular {
			continue
		}
		atime := now
		if f.hasAccessTimes {
			atime = f.atime
		}
		if err := os.Chtimes(f.path, atime.Add(shift), f.mtime.Add(shift)); err != nil {
			return err
		}
	}
	return nil
}

// substitute replaces the escaped placeholder, then the plain one, in a file.
func substitute(p string, esc, plain []byte) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	nb := bytes.ReplaceAll(b, []byte(`\\`+Placeholder), esc)
	nb = bytes.ReplaceAll(nb, []byte(Placeholder), plain)
	if bytes.Equal(nb, b) {
		return nil
	}
	return os.WriteFile(p, nb, 0o600)
}

// substituteRows puts the home into coffer's rows and checkpoints the WAL, so
// the database is one file again, as after coffer's clean shutdown.
func substituteRows(db, home string) error {
	conn, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for _, q := range []string{
		`update chat_messages set content = replace(content, '` + Placeholder + `', ?)`,
		`update conversations set agent_config = replace(agent_config, '` + Placeholder + `', ?)`,
	} {
		if _, err := conn.Exec(q, home); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(`pragma wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	return conn.Close()
}

// replaceRoot returns v with the placeholder replaced by root in every string
// and member name.
func replaceRoot(v any, root string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, Placeholder, root)
	case []any:
		for i := range x {
			x[i] = replaceRoot(x[i], root)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ReplaceAll(k, Placeholder, root)] = replaceRoot(e, root)
		}
		return out
	}
	return v
}

// goJSONContent is s as Go's json.Marshal writes it inside a string's quotes
// (with its HTML escapes: & < > as \u0026 \u003c \u003e).
func goJSONContent(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// pyJSONContent is s as Python's json.dumps (ensure_ascii=True) writes it
// inside a string's quotes: non-ASCII as \uXXXX, astral characters as a
// surrogate pair.
func pyJSONContent(s string) string {
	q := retaintest.Quote(s, retaintest.PythonASCII)
	return q[1 : len(q)-1]
}
