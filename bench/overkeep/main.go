// Command overkeep is bench/overkeep.sh's helper: it lays out the stores the
// script runs `mediactl gc` on, each with the truth of which of its blobs a
// session needs, and compares gc's dry-run plans against those truths.
//
//	overkeep prepare -dir D                  # D/forge/work, D/coffer/home-legacy + D/*.truth.json
//	overkeep gentruth -root R -blobs N -referenced K -out F
//	overkeep genuploads -store S -sessions D -n N -out F
//	overkeep report -rev 'LABEL=D' [-rev 'LABEL=D']...
//
// prepare unpacks the stores that forge's and coffer's own code wrote (the
// repository's copy of their archives and truths, internal/realworld/testdata)
// the way internal/realworld does for tests, without importing it (so that
// this builds whatever state the packages are in), and writes each truth in
// one shape: every file of every store with its size and class, "needed"
// (some session needs it), "orphan" (no session names it) or "name-only" (no
// session needs it, but some session's text names it: forge's text-only blob
// and its generated/ orphan whose digest is the name of a needed inbound/
// blob of the same bytes, coffer's files named only in a tool's `ls` output).
//
// gentruth writes the truth of a bench/gensessions tree: the generator names
// blob i sha256(uint64 i, little-endian) + ".png" and references blobs 0 to
// K-1 (K, the "referencing K distinct blobs" it prints, is min(references,
// -distinct)); blobs K to N-1 are orphans, named nowhere (the sessions' prose
// comes from a fixed word list). It checks that the tree has exactly those N
// files.
//
// genuploads writes a store of uploads with the names people give files,
// its sessions and its truth (see uploads.go).
//
// report reads, for each revision directory D, D/STORE.gc.json (gc -o json)
// and D/STORE.truth.json, and prints a markdown table with one column per
// revision: the true orphans (every blob no session needs), those the plan
// keeps, their bytes and share of the orphan bytes, and the needed blobs the
// plan would delete, which must be none: when there are any it says so on
// stderr and exits 1. It names a store's kept orphans, or a dozen of them
// and counts them all by their truth's why. A store whose gc run has no
// complete plan reads "not measured", and the command exits 3.
package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/internal/realworld"
)

// Classes of a truth's blobs.
const (
	needed   = "needed"
	orphan   = "orphan"
	nameOnly = "name-only"
)

// blob is one file of a store, as a truth knows it. Key is the store
// directory's base name, "/", and the key in the store: the key gc reports,
// prefixed with the name of the store it reports it in.
type blob struct {
	Key   string `json:"key"`
	Size  int64  `json:"size"`
	Class string `json:"class"`
	Why   string `json:"why,omitempty"`
}

type truth struct {
	Source string `json:"source"`
	Blobs  []blob `json:"blobs"`
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "prepare":
		err = prepare(os.Args[2:])
	case "gentruth":
		err = gentruth(os.Args[2:])
	case "genuploads":
		err = genuploads(os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "overkeep:", err)
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: overkeep prepare|gentruth|genuploads|report [flags]")
	os.Exit(2)
}

func prepare(args []string) error {
	fl := flag.NewFlagSet("prepare", flag.ExitOnError)
	dir := fl.String("dir", "", "directory to unpack into (created)")
	fl.Parse(args)
	if *dir == "" {
		return errors.New("prepare: -dir is required")
	}
	d, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	root, ft, err := realworld.InstallForge(filepath.Join(d, "forge"))
	if err != nil {
		return fmt.Errorf("forge: %w", err)
	}
	f, err := forgeTruth(ft)
	if err != nil {
		return fmt.Errorf("forge truth: %w", err)
	}
	if err := writeTruth(filepath.Join(d, "forge.truth.json"), f); err != nil {
		return err
	}
	home, ct, err := realworld.InstallCoffer(filepath.Join(d, "coffer"))
	if err != nil {
		return fmt.Errorf("coffer: %w", err)
	}
	c, err := cofferTruth(ct)
	if err != nil {
		return fmt.Errorf("coffer truth: %w", err)
	}
	if err := writeTruth(filepath.Join(d, "coffer.truth.json"), c); err != nil {
		return err
	}
	fmt.Printf("forge %s\ncoffer %s\n", root, filepath.Join(home, ".coffer"))
	return nil
}

// forgeTruth: the truth's blobs, by their class. needed is every blob some
// session needs; the others are orphans, named nowhere unless the truth
// lists them in orphans_kept_by_token_rule.
func forgeTruth(t map[string]any) (truth, error) {
	out := truth{Source: "internal/realworld/testdata/forge-truth.json"}
	need := set(t["needed"])
	named := set(t["orphans_kept_by_token_rule"])
	bl, ok := t["blobs"].([]any)
	if !ok {
		return out, errors.New("no blobs list")
	}
	for _, b := range bl {
		m, ok := b.(map[string]any)
		if !ok {
			return out, errors.New("a blob is not an object")
		}
		key := str(m["store"]) + "/" + str(m["key"])
		size, _ := m["size"].(float64)
		x := blob{Key: key, Size: int64(size), Class: orphan, Why: str(m["why"])}
		switch {
		case need[key]:
			x.Class, x.Why = needed, ""
		case named[key]:
			x.Class = nameOnly
		}
		out.Blobs = append(out.Blobs, x)
	}
	return out, nil
}

// cofferTruth: the files of each store; attached ones are needed, the
// others are orphans (their file's "how" says how they became one), the
// mentioned_only ones named in some session's text.
func cofferTruth(t map[string]any) (truth, error) {
	out := truth{Source: "internal/realworld/testdata/coffer-truth.json"}
	legacy, ok := t["legacy"].(map[string]any)
	if !ok {
		return out, errors.New("no legacy object")
	}
	files, _ := legacy["files"].(map[string]any)
	mentions := map[string][]string{}
	for _, m := range list(legacy["mentions"]) {
		if m, ok := m.(map[string]any); ok {
			mentions[str(m["name"])] = append(mentions[str(m["name"])], str(m["kind"]))
		}
	}
	perStore, _ := legacy["per_store"].(map[string]any)
	for dir, s := range perStore {
		sets, ok := s.(map[string]any)
		if !ok {
			return out, fmt.Errorf("per_store %s is not an object", dir)
		}
		attached, mentioned, orphans := set(sets["attached"]), set(sets["mentioned_only"]), set(sets["orphans"])
		for _, k := range list(sets["files"]) {
			key := str(k)
			f, ok := files[filepath.Join(dir, key)].(map[string]any)
			if !ok {
				return out, fmt.Errorf("file %s of %s: not in legacy.files", key, dir)
			}
			size, _ := f["size"].(float64)
			x := blob{Key: filepath.Base(dir) + "/" + key, Size: int64(size)}
			switch {
			case attached[key]:
				x.Class = needed
			case mentioned[key]:
				x.Class, x.Why = nameOnly, str(f["how"])+"; named by "+strings.Join(mentions[key], ", ")
			case orphans[key]:
				x.Class, x.Why = orphan, str(f["how"])
			default:
				return out, fmt.Errorf("file %s of %s: neither attached, mentioned_only nor an orphan", key, dir)
			}
			out.Blobs = append(out.Blobs, x)
		}
	}
	return out, nil
}

func gentruth(args []string) error {
	fl := flag.NewFlagSet("gentruth", flag.ExitOnError)
	root := fl.String("root", "", "the work directory gensessions wrote")
	blobs := fl.Int("blobs", 0, "its -blobs")
	refd := fl.Int("referenced", -1, "the distinct blobs it says its sessions reference")
	outf := fl.String("out", "", "truth file to write")
	fl.Parse(args)
	if *root == "" || *outf == "" || *blobs <= 0 || *refd < 0 || *refd > *blobs {
		return errors.New("gentruth: need -root, -out, -blobs > 0 and 0 <= -referenced <= -blobs")
	}
	inbound := filepath.Join(*root, ".forge", "files", "inbound")
	out := truth{Source: fmt.Sprintf("bench/gensessions: blobs 0..%d referenced, %d..%d written only", *refd-1, *refd, *blobs-1)}
	want := map[string]bool{}
	for i := range *blobs {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		d := sha256.Sum256(b[:])
		name := hex.EncodeToString(d[:]) + ".png"
		want[name] = true
		x := blob{Key: "inbound/" + name, Size: 8, Class: needed}
		if i >= *refd {
			x.Class, x.Why = orphan, "written, never referenced"
		}
		out.Blobs = append(out.Blobs, x)
	}
	// The generator's naming, checked: the tree holds exactly these files.
	n := 0
	err := filepath.WalkDir(inbound, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if !want[e.Name()] || filepath.Dir(p) != inbound {
			return fmt.Errorf("%s: not a blob gensessions writes (has its naming changed?)", p)
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n != *blobs {
		return fmt.Errorf("%s holds %d blobs, want %d", inbound, n, *blobs)
	}
	return writeTruth(*outf, out)
}

func writeTruth(p string, t truth) error {
	slices.SortFunc(t.Blobs, func(a, b blob) int { return strings.Compare(a.Key, b.Key) })
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// measure is one store at one revision.
type measure struct {
	ok      bool   // a complete plan for every store of the run
	problem string // why not
	exit    int

	blobs, orphans, kept, nameOnly int
	blobBytes, orphanBytes         int64
	keptBytes, nameOnlyBytes       int64
	keptNamed, keptNamedBytes      int64 // kept orphans the truth says some text names
	listed                         int64 // blobs gc listed (its plan's "blobs")
	candidates                     int
	neededDeleted                  []string
	unknown                        []string // candidates the truth does not know
	keptList                       []blob
}

func report(args []string) error {
	fl := flag.NewFlagSet("report", flag.ExitOnError)
	var revs []string
	fl.Func("rev", "LABEL=DIR: a revision's results (repeatable, in column order)", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want LABEL=DIR")
		}
		revs = append(revs, s)
		return nil
	})
	storesFlag := fl.String("stores", "forge coffer gen uploads", "stores, in row order")
	fl.Parse(args)
	if len(revs) == 0 {
		return errors.New("report: need -rev")
	}
	stores := strings.Fields(*storesFlag)
	labels := make([]string, len(revs))
	res := make([]map[string]measure, len(revs))
	for i, r := range revs {
		label, dir, _ := strings.Cut(r, "=")
		labels[i] = label
		res[i] = map[string]measure{}
		for _, s := range stores {
			m, err := compare(filepath.Join(dir, s+".gc.json"), filepath.Join(dir, s+".truth.json"))
			if err != nil {
				return fmt.Errorf("%s %s: %w", label, s, err)
			}
			res[i][s] = m
		}
	}

	// The table: the truth's columns once (every revision plans the same
	// stores), then each revision's.
	fmt.Print("| store | blobs | true orphans | … named in some session's text |")
	for _, l := range labels {
		fmt.Printf(" orphans kept, %s | needed deleted, %s |", l, l)
	}
	fmt.Print("\n|---|---:|---:|---:|")
	for range labels {
		fmt.Print("---:|---:|")
	}
	fmt.Println()
	for _, s := range stores {
		t := res[0][s]
		fmt.Printf("| %s | %d, %s | %d, %s | %d, %s |", s, t.blobs, human(t.blobBytes), t.orphans, human(t.orphanBytes), t.nameOnly, human(t.nameOnlyBytes))
		for i := range labels {
			m := res[i][s]
			if !m.ok {
				fmt.Print(" not measured | not measured |")
				continue
			}
			fmt.Printf(" **%d, %s = %s** |", m.kept, human(m.keptBytes), pct(m.keptBytes, m.orphanBytes))
			if len(m.neededDeleted) > 0 {
				fmt.Printf(" **%d ✗** |", len(m.neededDeleted))
			} else {
				fmt.Print(" 0 |")
			}
		}
		fmt.Println()
	}
	fmt.Println()
	fmt.Println("True orphans: every blob the truth does not call needed. Orphans kept: true orphans that are not candidates of the plan, their bytes and share of the orphan bytes. Needed deleted: candidates the truth calls needed (must be 0).")

	// What each column's kept orphans are, and anything off.
	bad, missing := false, false
	fmt.Println()
	for i, l := range labels {
		for _, s := range stores {
			m := res[i][s]
			if !m.ok {
				missing = true
				fmt.Printf("- %s, %s: not measured: %s\n", l, s, m.problem)
				continue
			}
			var ks []string
			for _, b := range spread(m.keptList, maxListed) {
				k := longHex.ReplaceAllStringFunc(b.Key, func(h string) string { return h[:8] + "…" + h[len(h)-4:] })
				ks = append(ks, fmt.Sprintf("`%s` (%d B, %s: %s)", k, b.Size, b.Class, b.Why))
			}
			if len(ks) == 0 {
				ks = []string{"none"}
			}
			if more := len(m.keptList) - len(ks); more > 0 {
				ks = append(ks, fmt.Sprintf("and %d more", more))
			}
			fmt.Printf("- %s, %s: gc exit %d, listed %d blobs (truth %d), %d candidates; orphans kept: %s\n", l, s, m.exit, m.listed, m.blobs, m.candidates, strings.Join(ks, "; "))
			if len(m.keptList) > maxListed {
				fmt.Printf("  - orphans kept, by what the truth says of them: %s\n", byWhy(m.keptList))
			}
			if len(m.unknown) > 0 {
				fmt.Printf("  - candidates the truth does not know: %q\n", m.unknown)
			}
			if len(m.neededDeleted) > 0 {
				bad = true
				fmt.Fprintf(os.Stderr, "\n!!!!! %s, %s: gc would DELETE %d NEEDED blob(s): %q !!!!!\n\n", l, s, len(m.neededDeleted), m.neededDeleted)
				fmt.Printf("  - **NEEDED BLOBS IT WOULD DELETE**: %q\n", m.neededDeleted)
			}
		}
	}
	if bad {
		os.Exit(1)
	}
	if missing {
		os.Exit(3)
	}
	return nil
}

// longHex is a digest or uuid in a key, which the report shortens.
var longHex = regexp.MustCompile(`[0-9a-fA-F]{32,}`)

// maxListed is how many of a store's kept orphans the report names; a
// store that keeps more has them counted by their truth's why.
const maxListed = 12

// spread is at most n of l, evenly spaced.
func spread(l []blob, n int) []blob {
	if len(l) <= n {
		return l
	}
	out := make([]blob, n)
	for i := range out {
		out[i] = l[i*len(l)/n]
	}
	return out
}

// byWhy counts kept orphans by their class and why, the most first.
func byWhy(l []blob) string {
	n := map[string]int{}
	for _, b := range l {
		n[b.Class+": "+b.Why]++
	}
	whys := slices.Collect(maps.Keys(n))
	slices.SortFunc(whys, func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	var out []string
	for _, w := range whys {
		out = append(out, fmt.Sprintf("%d %s", n[w], w))
	}
	return strings.Join(out, "; ")
}

// compare reads one gc -o json document and its truth.
func compare(gcPath, truthPath string) (measure, error) {
	var m measure
	var t truth
	tb, err := os.ReadFile(truthPath)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(tb, &t); err != nil {
		return m, fmt.Errorf("%s: %w", truthPath, err)
	}
	byKey := map[string]blob{}
	for _, b := range t.Blobs {
		byKey[b.Key] = b
		m.blobs++
		m.blobBytes += b.Size
		if b.Class != needed {
			m.orphans++
			m.orphanBytes += b.Size
		}
		if b.Class == nameOnly {
			m.nameOnly++
			m.nameOnlyBytes += b.Size
		}
	}

	var doc struct {
		ExitCode int `json:"exit_code"`
		Stores   []struct {
			Store string `json:"store"`
			Plan  *struct {
				Blobs      int64 `json:"blobs"`
				Complete   bool  `json:"complete"`
				Candidates []struct {
					Key  string `json:"key"`
					Size int64  `json:"size"`
				} `json:"candidates"`
			} `json:"plan"`
			Refused any `json:"refused"`
			Error   any `json:"error"`
		} `json:"stores"`
	}
	gb, err := os.ReadFile(gcPath)
	if err != nil {
		m.problem = err.Error()
		return m, nil
	}
	if err := json.Unmarshal(gb, &doc); err != nil {
		m.problem = fmt.Sprintf("%s: not a gc -o json document: %v", gcPath, err)
		return m, nil
	}
	m.exit = doc.ExitCode
	if len(doc.Stores) == 0 {
		m.problem = fmt.Sprintf("%s: no stores (exit %d)", gcPath, doc.ExitCode)
		return m, nil
	}
	cand := map[string]bool{}
	for _, s := range doc.Stores {
		if s.Plan == nil || !s.Plan.Complete {
			m.problem = fmt.Sprintf("store %s: no complete plan (refused %v, error %v)", s.Store, s.Refused, s.Error)
			return m, nil
		}
		m.listed += s.Plan.Blobs
		base := filepath.Base(s.Store)
		for _, c := range s.Plan.Candidates {
			k := base + "/" + c.Key
			cand[k] = true
			m.candidates++
			b, ok := byKey[k]
			switch {
			case !ok:
				m.unknown = append(m.unknown, k)
			case b.Class == needed:
				m.neededDeleted = append(m.neededDeleted, k)
			}
		}
	}
	for _, b := range t.Blobs {
		if b.Class != needed && !cand[b.Key] {
			m.kept++
			m.keptBytes += b.Size
			if b.Class == nameOnly {
				m.keptNamed++
				m.keptNamedBytes += b.Size
			}
			m.keptList = append(m.keptList, b)
		}
	}
	m.ok = true
	return m, nil
}

func human(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func pct(a, b int64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(b))
}

func set(v any) map[string]bool {
	out := map[string]bool{}
	for _, s := range list(v) {
		out[str(s)] = true
	}
	return out
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
